import fc from 'fast-check'

import type { Message } from '../../index'

type Dialect = 'anthropic' | 'openai'

const words = fc.array(fc.constantFrom('read', 'the', 'file', '你好', 'build', 'error', 'ok', '🎉', 'src/main.rs', '{"a":1}', '\n'), {
  minLength: 0,
  maxLength: 40,
})
const text = words.map((w) => w.join(' '))

/** One exchange: a user prompt, then assistant steps that may call tools (in parallel). */
const turn = (dialect: Dialect, turnIndex: number) =>
  fc
    .record({
      prompt: text,
      steps: fc.array(
        fc.record({
          say: text,
          think: fc.boolean(),
          unknown: fc.boolean(),
          calls: fc.array(fc.record({ name: fc.constantFrom('read_file', 'bash', 'edit'), arg: text, output: text, isError: fc.boolean() }), {
            minLength: 0,
            maxLength: 3,
          }),
        }),
        { minLength: 1, maxLength: 3 },
      ),
    })
    .map(({ prompt, steps }) => {
      const out: Message[] = [{ role: 'user', content: prompt }]
      steps.forEach((step, s) => {
        const ids = step.calls.map((_, c) => `call_${turnIndex}_${s}_${c}`)
        if (dialect === 'anthropic') {
          const content: any[] = []
          if (step.think) content.push({ type: 'thinking', thinking: step.say, signature: 'sig' })
          content.push({ type: 'text', text: step.say })
          if (step.unknown) content.push({ type: 'mystery_block', payload: step.say })
          step.calls.forEach((call, c) => content.push({ type: 'tool_use', id: ids[c], name: call.name, input: { path: call.arg, n: c } }))
          out.push({ role: 'assistant', content })
          if (step.calls.length > 0) {
            out.push({
              role: 'user',
              content: step.calls.map((call, c) => ({ type: 'tool_result', tool_use_id: ids[c], content: call.output, is_error: call.isError })),
            })
          }
        } else {
          out.push({
            role: 'assistant',
            content: step.calls.length > 0 ? null : step.say,
            ...(step.calls.length > 0
              ? { tool_calls: step.calls.map((call, c) => ({ id: ids[c], type: 'function' as const, function: { name: call.name, arguments: JSON.stringify({ path: call.arg }) } })) }
              : {}),
          })
          step.calls.forEach((call, c) => out.push({ role: 'tool', tool_call_id: ids[c], content: call.output }))
        }
      })
      return out
    })

/** A conversation: optional system prompt, then 1–12 exchanges in one dialect. */
export const conversation = fc
  .record({ dialect: fc.constantFrom<Dialect>('anthropic', 'openai'), system: fc.boolean(), turns: fc.integer({ min: 1, max: 12 }) })
  .chain(({ dialect, system, turns }) =>
    fc.tuple(...Array.from({ length: turns }, (_, i) => turn(dialect, i))).map((exchanges) => {
      const messages: Message[] = system ? [{ role: 'system', content: 'You are a coding agent.' }] : []
      for (const exchange of exchanges) messages.push(...exchange)
      return messages
    }),
  )
