/**
 * Archives in your own store: `archiveStore` takes an object with `put`, `get`, `list` and
 * `delete`, so compacted messages, their metadata, the audit log and extracted memory can live in
 * your database instead of a directory or a bucket. This one keeps them in a `Map` (swap the
 * four methods for your database's queries); its `put` honours `ifNotExists`, which keeps
 * sequence numbers unique when several agents write one session at once.
 *
 *   npx tsx examples/archive-store.ts
 *
 * Runs offline: the summaries are written by the built-in extractive summarizer unless an API
 * key is set. EXAMPLE_CONTEXT_LIMIT sets the context window (default 3000, small so that
 * compaction happens).
 */
import {
  Compactor,
  listArchives,
  restoreMessages,
  type ArchiveStore,
  type ArchiveStoreEntry,
  type Message,
} from 'context-compact'

/** An archive store over a Map: key → bytes and when they were written. */
class MapArchiveStore implements ArchiveStore {
  readonly entries = new Map<string, { value: Uint8Array; writtenAt: Date }>()

  async put(key: string, value: Uint8Array, options: { ifNotExists: boolean }): Promise<boolean> {
    // Create-only writes must be atomic: in a database, `INSERT … ON CONFLICT DO NOTHING` and
    // return whether a row was inserted. Here the check and the write happen in one turn of
    // the event loop, so no other write can come in between.
    if (options.ifNotExists && this.entries.has(key)) return false
    this.entries.set(key, { value: Uint8Array.from(value), writtenAt: new Date() })
    return true
  }

  async get(key: string): Promise<Uint8Array | null> {
    return this.entries.get(key)?.value ?? null
  }

  async list(prefix: string): Promise<ArchiveStoreEntry[]> {
    return [...this.entries]
      .filter(([key]) => key.startsWith(prefix))
      .map(([key, entry]) => ({ key, size: entry.value.byteLength, lastModified: entry.writtenAt }))
  }

  async delete(key: string): Promise<void> {
    this.entries.delete(key)
  }
}

const store = new MapArchiveStore()
const sessionId = 'agent-7'
const compactor = new Compactor({
  contextTokenLimit: Number(process.env.EXAMPLE_CONTEXT_LIMIT ?? 3000),
  sessionId,
  archiveStore: store,
  extractMemory: true,
})

// A simulated agent loop: the user asks, the assistant reads files, the tools answer.
let messages: Message[] = [{ role: 'system', content: 'You are a coding agent.' }]
const original: Message[] = [...messages]
let compactions = 0
for (let turn = 0; turn < 60; turn++) {
  const added: Message[] = [
    { role: 'user', content: `Turn ${turn}: we decided to keep src/module${turn}.ts small. What is in it?` },
    {
      role: 'assistant',
      content: [{ type: 'tool_use', id: `toolu_${turn}`, name: 'read_file', input: { path: `src/module${turn}.ts` } }],
    },
    {
      role: 'user',
      content: [{ type: 'tool_result', tool_use_id: `toolu_${turn}`, content: `export const value${turn} = ${turn}\n`.repeat(12) }],
    },
    { role: 'assistant', content: `module${turn}.ts exports value${turn}.` },
  ]
  messages = [...messages, ...added]
  original.push(...added)
  const result = await compactor.compact(messages)
  if (result.compacted) {
    compactions++
    console.log(`turn ${turn}: compacted ${result.stats.compactedMessageCount} messages into ${result.archivePath}`)
    messages = result.messages
  }
}

// The history lives in the store: list it and restore the whole conversation from it.
const archives = await listArchives('unused', sessionId, { archiveStore: store })
for (const archive of archives) {
  console.log(`archive ${archive.sequence}: ${archive.messageCount} messages, ${archive.sizeBytes} bytes, ${archive.path}`)
}
const restored = await restoreMessages(messages, { sessionId, archiveStore: store })
const identical = JSON.stringify(restored) === JSON.stringify(original)
console.log(`keys in the store: ${[...store.entries.keys()].sort().join(', ')}`)
console.log(`done: ${compactions} compactions, ${archives.length} archives, restored ${restored.length} messages, identical: ${identical}`)
