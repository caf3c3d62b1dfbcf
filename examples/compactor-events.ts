/**
 * A `Compactor` with event and log listeners, in a simulated agent loop (no agent model: the
 * assistant's tool calls and the tool outputs are scripted), so you can watch what the library
 * does and why: when it compacts, which provider writes the summary, each retry with its error
 * and delay, and the statistics.
 *
 *   npx tsx examples/compactor-events.ts
 *
 * With no API key in the environment the summaries are written by the built-in extractive
 * summarizer, offline. With ANTHROPIC_API_KEY (or OPENAI_API_KEY) set, by that API.
 *
 * Environment:
 *   ANTHROPIC_BASE_URL / OPENAI_BASE_URL   another endpoint, e.g. a local mock
 *   EXAMPLE_CONTEXT_LIMIT  the context window (default 8000, small so that compaction happens)
 *   EXAMPLE_OUTPUT_DIR     where the archives of compacted messages go (default ./.context-compact)
 */
import { Compactor, type CompactEvent, type LogEntry, type Message } from 'context-compact'

const TURNS = 24

function onEvent(event: CompactEvent) {
  switch (event.type) {
    case 'retry':
      console.log(
        `[event] retry: attempt ${event.attempt} failed with ${event.error.code}` +
          `${event.error.status ? ` (HTTP ${event.error.status})` : ''}: ${event.error.message}; next attempt in ${event.delayMs} ms`,
      )
      break
    default:
      // Other event types may be added; log them as they come.
      console.log(`[event] ${JSON.stringify(event)}`)
  }
}

function onLog(entry: LogEntry) {
  if (entry.level === 'debug') return
  console.log(`[log ${entry.level}] ${entry.message}${entry.fields ? ' ' + JSON.stringify(entry.fields) : ''}`)
}

const compactor = new Compactor({
  contextTokenLimit: Number(process.env.EXAMPLE_CONTEXT_LIMIT ?? 8000),
  // Where the summary request goes when ANTHROPIC_API_KEY is set (the default reads the same
  // variable; passed here to show the option).
  baseUrl: process.env.ANTHROPIC_API_KEY ? process.env.ANTHROPIC_BASE_URL : process.env.OPENAI_BASE_URL,
  maxRetries: 2,
  retryBaseDelayMs: 200,
  keepRecentTurns: 1,
  outputDir: process.env.EXAMPLE_OUTPUT_DIR,
  sessionId: 'events-example',
  onEvent,
  onLog,
})

/** A scripted tool output of a few hundred tokens. */
function fileContent(turn: number): string {
  return Array.from({ length: 40 }, (_, line) => `export function step${turn}_${line}(input: string): number { return input.length * ${line} }`).join('\n')
}

async function main() {
  let messages: Message[] = [{ role: 'system', content: 'You are a coding assistant.' }]
  let compactions = 0

  for (let turn = 1; turn <= TURNS; turn++) {
    messages.push({ role: 'user', content: `Step ${turn}: read src/module${turn}.ts and fix the failing test.` })
    messages.push({
      role: 'assistant',
      content: [
        { type: 'text', text: `Reading src/module${turn}.ts.` },
        { type: 'tool_use', id: `toolu_${turn}`, name: 'read_file', input: { path: `src/module${turn}.ts` } },
      ],
    })
    messages.push({ role: 'user', content: [{ type: 'tool_result', tool_use_id: `toolu_${turn}`, content: fileContent(turn) }] })
    messages.push({ role: 'assistant', content: `Fixed module ${turn}: the length check was off by one.` })

    // What the trigger sees (cheap: counts are cached per message object).
    const measure = compactor.measure(messages)
    if (!measure.shouldCompact) continue
    console.log(`turn ${turn}: ${measure.tokens} tokens ≥ threshold ${measure.threshold} (${measure.source}): compacting`)
    const result = await compactor.compact(messages)
    if (result.compacted) {
      compactions++
      messages = result.messages
      console.log(
        `turn ${turn}: compacted ${result.stats.compactedMessageCount} messages, ` +
          `${result.stats.originalTokenCount} → ${result.stats.compactedTokenCount} tokens ` +
          `(${(result.stats.compactionRatio * 100).toFixed(1)} %), summary by ${result.provider}${result.model ? ' ' + result.model : ''} ` +
          `after ${result.attempts} attempt(s); archive: ${result.archivePath}`,
      )
    } else {
      console.log(`turn ${turn}: not compacted: ${result.error ? `${result.error.code}: ${result.error.message}` : 'below the threshold'}`)
    }
  }
  console.log(`done: ${TURNS} turns, ${compactions} compactions, ${messages.length} messages, ${compactor.countTokens(messages)} tokens`)
}

main().catch((error) => {
  console.error(error)
  process.exitCode = 1
})
