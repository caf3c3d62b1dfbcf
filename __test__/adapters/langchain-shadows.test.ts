// The LangChain adapter's shadows (adapters/langchain/shadows.js) around a compaction: the
// messages the library wrote come back as instances with an id, and the summary with the mark
// summarizationMiddleware gives its own, whatever the other messages of the list are, including
// a message that is its own shadow (one whose toJSON differs from its fields: here a value that
// looks serialized, which toJSON escapes).
import { createRequire } from 'node:module'
import { rmSync } from 'node:fs'

import { AIMessage, HumanMessage, SystemMessage, ToolMessage } from '@langchain/core/messages'
import { describe, expect, it } from 'vitest'

import { generateConversation } from '../../benchmark/generate.mjs'
import { toLangChainMessages } from '../../benchmark/adapters/langchain-history.mjs'
import { Compactor } from '../../index'
import { tempDir } from '../support/helpers'

const require = createRequire(import.meta.url)
const { Shadows } = require('../../adapters/langchain/shadows.js')
const { messageClassesOf } = require('../../lib/messages/langchain-forms.js')

async function compactThroughShadows(messages: any[]) {
  const dir = tempDir('cc-lc-shadows-')
  try {
    const shadows = new Shadows()
    const full = shadows.full(messages)
    const result = await new Compactor({ contextTokenLimit: 8000, outputDir: dir }).compact(full)
    expect(result.compacted).toBe(true)
    return { full, out: result.messages.map((m: unknown) => shadows.instanceOf(m, messageClassesOf(messages))) }
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
}

describe('the messages the library wrote, through the shadows', () => {
  for (const ownShadow of [false, true]) {
    it(`are instances with an id, the summary marked${ownShadow ? ', with a message that is its own shadow in the list' : ''}`, async () => {
      const messages: any[] = toLangChainMessages(generateConversation({ targetTokens: 20000, seed: 3 }), { AIMessage, HumanMessage, SystemMessage, ToolMessage })
      if (ownShadow) messages[1] = new HumanMessage({ content: 'x', id: 'own', additional_kwargs: { note: { lc: 1, type: 'secret', id: ['KEY'] } } })
      const { full, out } = await compactThroughShadows(messages)
      expect(full.includes(messages[1])).toBe(ownShadow)
      const written = out.filter((m: unknown) => !messages.includes(m))
      expect(written.length).toBeGreaterThan(0)
      for (const message of written) {
        expect(messageClassesOf([message]).size).toBe(1)
        expect(typeof message.id).toBe('string')
        expect(message.id).not.toBe('')
      }
      const summaries = written.filter((m: any) => m instanceof HumanMessage)
      expect(summaries).toHaveLength(1)
      expect(summaries[0].additional_kwargs.lc_source).toBe('summarization')
      // The caller's messages the compaction kept are the caller's own instances.
      for (const message of out) if (!written.includes(message)) expect(messages).toContain(message)
    })
  }
})
