// The messages a compaction of LangChain instances wrote, as the LangChain adapter gives them to
// the state (adapters/langchain/written.js): instances with an id, and the summary with the mark
// summarizationMiddleware gives its own, whatever the other messages of the list are, including
// a message whose toJSON differs from its fields (here a value that looks serialized, which
// toJSON escapes). (The file's name is from when the adapter kept shadow copies of the messages.)
import { createRequire } from 'node:module'
import { rmSync } from 'node:fs'

import { AIMessage, HumanMessage, SystemMessage, ToolMessage } from '@langchain/core/messages'
import { describe, expect, it } from 'vitest'

import { generateConversation } from '../../benchmark/generate.mjs'
import { toLangChainMessages } from '../../benchmark/adapters/langchain-history.mjs'
import { Compactor } from '../../index'
import { tempDir } from '../support/helpers'

const require = createRequire(import.meta.url)
const { stateMessages } = require('../../adapters/langchain/written.js')
const { messageClassesOf } = require('../../lib/messages/langchain-forms.js')

async function compactAsTheAdapter(messages: any[]) {
  const dir = tempDir('cc-lc-written-')
  try {
    const compactor = new Compactor({ contextTokenLimit: 8000, outputDir: dir })
    const result = await compactor.compact(messages)
    expect(result.compacted).toBe(true)
    const out = stateMessages(result.messages, messages, compactor, messageClassesOf(messages))
    return { out }
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
}

describe('the messages the library wrote, as the adapter gives them to the state', () => {
  for (const escaped of [false, true]) {
    it(`are instances with an id, the summary marked${escaped ? ', with a message whose toJSON escapes a value in the list' : ''}`, async () => {
      const messages: any[] = toLangChainMessages(generateConversation({ targetTokens: 20000, seed: 3 }), { AIMessage, HumanMessage, SystemMessage, ToolMessage })
      if (escaped) messages[1] = new HumanMessage({ content: 'x', id: 'own', additional_kwargs: { note: { lc: 1, type: 'secret', id: ['KEY'] } } })
      const { out } = await compactAsTheAdapter(messages)
      const written = out.filter((m: unknown) => !messages.includes(m))
      expect(written.length).toBeGreaterThan(0)
      for (const message of written) {
        expect(messageClassesOf([message]).size).toBe(1)
        expect(typeof message.id).toBe('string')
        expect(message.id).not.toBe('')
        // What is archived and sent (toJSON) has it too.
        expect(message.toJSON().kwargs.id).toBe(message.id)
      }
      const summaries = written.filter((m: any) => m instanceof HumanMessage)
      expect(summaries).toHaveLength(1)
      expect(summaries[0].additional_kwargs.lc_source).toBe('summarization')
      expect(summaries[0].toJSON().kwargs.additional_kwargs.lc_source).toBe('summarization')
      // The caller's messages the compaction kept are the caller's own instances.
      for (const message of out) if (!written.includes(message)) expect(messages).toContain(message)
    })
  }
})
