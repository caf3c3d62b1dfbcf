'use strict'

// MessageMarkMap (type seed §二): batches of compacted messages, by original index. The three
// helpers are the seed's code, unchanged.

const { describe, invalidArgument, shown } = require('../addon/validate.js')

function getCurrentBatchIndices(markMap) {
  const currentBoundaryIndex = markMap.boundaryToBatch.indexOf(markMap.currentBatch)
  const boundary = markMap.batchBoundaries[currentBoundaryIndex]

  return markMap.originalIndices.filter((index) => index >= boundary)
}

function isModified(originalIndex, markMap) {
  const currentBoundaryIndex = markMap.boundaryToBatch.indexOf(markMap.currentBatch)
  const boundary = markMap.batchBoundaries[currentBoundaryIndex]
  return originalIndex < boundary
}

function getBatchIndex(originalIndex, markMap) {
  const currentBoundaryIndex = markMap.boundaryToBatch.indexOf(markMap.currentBatch)
  const boundary = markMap.batchBoundaries[currentBoundaryIndex]
  return originalIndex - boundary
}

/** A mark map for `length` messages in one batch (seed §八.1, with the indices added). */
function createMarkMap(length = 0) {
  if (typeof length !== 'number' || !Number.isInteger(length) || length < 0 || length > 100_000_000) {
    throw invalidArgument(`length: expected an integer from 0 to 100000000, got ${shown(length)}`)
  }
  return {
    originalIndices: Array.from({ length }, (_, i) => i),
    batchBoundaries: [0],
    boundaryToBatch: [0],
    currentBatch: 0,
  }
}

module.exports = {
  getCurrentBatchIndices,
  isModified,
  getBatchIndex,
  createMarkMap,
}
