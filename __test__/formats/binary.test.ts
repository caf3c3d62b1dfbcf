// Binary parts are archived with their type and restored as they were: AI SDK `Uint8Array`,
// `ArrayBuffer`, `Buffer` and `URL` data (and data URLs), Gemini `inlineData`, Bedrock `bytes`,
// OpenAI Responses `input_image` / `input_file`. Restored AI SDK messages pass the SDK's own
// `modelMessageSchema`; a round trip (compact, restore, compact again) sends the model the same
// parts; binary parts are counted as the image or document they are; a caller's own object that
// looks like the archive's tag (`{$bytes, $type}`, `{$url}`) comes back as the same plain object.
import { modelMessageSchema } from 'ai'
import { describe, expect, it } from 'vitest'

import { Compactor, compactMessages, countTokens, restoreMessages } from '../../index'
import { tempDir } from '../support/helpers'

type Msg = any

/** A PNG of `width`×`height` as an image reader sees it (its header), padded to `size` bytes. */
function png(width: number, height: number, size = 3_000): Uint8Array {
  const bytes = new Uint8Array(size)
  bytes.set([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 13, 0x49, 0x48, 0x44, 0x52])
  const view = new DataView(bytes.buffer)
  view.setUint32(16, width)
  view.setUint32(20, height)
  bytes.set([8, 2, 0, 0, 0], 24)
  // Bytes of every value after the header, so that a lost or shifted byte shows.
  for (let i = 33; i < size; i++) bytes[i] = (i * 7 + width) & 0xff
  return bytes
}

const PDF = new TextEncoder().encode('%PDF-1.4\n1 0 obj << /Type /Page >> endobj\n2 0 obj << /Type /Page >> endobj\n%%EOF\n')
const base64 = (bytes: Uint8Array) => Buffer.from(bytes).toString('base64')
const dataUrl = (bytes: Uint8Array, type: string) => `data:${type};base64,${base64(bytes)}`
const filler = (n: number) => `${'Reading the module and planning the next edit. '.repeat(40)} (${n})`

/** The caller's own objects that look like the archive's tags: they must come back as they are. */
const LOOKALIKES = {
  asTag: { $bytes: 'iVBORw0KGgo=', $type: 'Uint8Array' },
  asUrl: { $url: 'https://example.com/x' },
  escaped: { $$bytes: 1, $$$url: [2], $type: 't', path: 'a.ts' },
}

/** Differences between `a` (what came back) and `b` (what was passed): types, bytes, keys and their order. */
function differences(a: unknown, b: unknown, path = '$'): string[] {
  if (b instanceof URL) return a instanceof URL && a.href === b.href ? [] : [`${path}: expected URL ${b.href}, got ${kindOf(a)}`]
  if (b instanceof ArrayBuffer || ArrayBuffer.isView(b)) {
    const ctor = (b as object).constructor
    if (!(a instanceof (ctor as any)) || (a as object).constructor !== ctor) return [`${path}: expected ${ctor.name}, got ${kindOf(a)}`]
    const bytes = (x: any) => (x instanceof ArrayBuffer ? new Uint8Array(x) : new Uint8Array(x.buffer, x.byteOffset, x.byteLength))
    return Buffer.from(bytes(a)).equals(Buffer.from(bytes(b))) ? [] : [`${path}: different bytes`]
  }
  if (Array.isArray(b)) {
    if (!Array.isArray(a) || a.length !== b.length) return [`${path}: expected an array of ${b.length}, got ${kindOf(a)}`]
    return b.flatMap((item, i) => differences(a[i], item, `${path}[${i}]`))
  }
  if (b !== null && typeof b === 'object') {
    if (a === null || typeof a !== 'object' || Object.getPrototypeOf(a) !== Object.prototype) return [`${path}: expected a plain object, got ${kindOf(a)}`]
    const keysA = Object.keys(a)
    const keysB = Object.keys(b)
    if (keysA.join('\u0000') !== keysB.join('\u0000')) return [`${path}: keys ${JSON.stringify(keysA)} instead of ${JSON.stringify(keysB)}`]
    return keysB.flatMap((key) => differences((a as any)[key], (b as any)[key], `${path}.${key}`))
  }
  return Object.is(a, b) ? [] : [`${path}: ${kindOf(a)} instead of ${describe(b)}`]
}

function kindOf(x: unknown): string {
  if (x === null || typeof x !== 'object') return JSON.stringify(x) ?? String(x)
  return (x as object).constructor?.name ?? 'object'
}

/** Each format's conversation: binary parts early (compacted, archived) and late (kept). */
const FORMATS: Record<string, () => Msg[]> = {
  'ai-sdk': () => [
    { role: 'system', content: 'You are a coding agent.' },
    {
      role: 'user',
      content: [
        { type: 'text', text: 'Match the page to these mockups and the spec.' },
        { type: 'image', image: png(800, 600), mediaType: 'image/png' },
        { type: 'image', image: png(320, 200).buffer },
        { type: 'image', image: Buffer.from(png(64, 64)), mediaType: 'image/png' },
        { type: 'image', image: new URL('https://example.com/mock.png') },
        { type: 'image', image: dataUrl(png(16, 16), 'image/png') },
        { type: 'file', data: PDF, mediaType: 'application/pdf', filename: 'spec.pdf' },
        { type: 'file', data: new URL('https://example.com/spec.pdf'), mediaType: 'application/pdf' },
        { type: 'file', data: base64(png(32, 32)), mediaType: 'image/png' },
      ],
    },
    { role: 'assistant', content: [{ type: 'text', text: filler(1) }, { type: 'tool-call', toolCallId: 'c1', toolName: 'read', input: { path: 'page.tsx', ...LOOKALIKES } }] },
    { role: 'tool', content: [{ type: 'tool-result', toolCallId: 'c1', toolName: 'read', output: { type: 'text', value: filler(2) } }] },
    { role: 'assistant', content: [{ type: 'text', text: filler(3) }, { type: 'file', data: new Uint8Array([1, 2, 3, 250]), mediaType: 'application/octet-stream' }] },
    { role: 'user', content: [{ type: 'text', text: filler(4) }] },
    { role: 'assistant', content: filler(5) },
    { role: 'user', content: [{ type: 'text', text: 'And this one, please.' }, { type: 'image', image: png(1024, 768), mediaType: 'image/png' }, { type: 'file', data: png(10, 10).buffer, mediaType: 'image/png' }] },
    { role: 'assistant', content: [{ type: 'reasoning', text: 'Comparing the two mockups.' }, { type: 'text', text: 'Done.' }, { type: 'file', data: new Uint8Array([9, 8, 7]), mediaType: 'application/octet-stream' }] },
  ],
  gemini: () => [
    { role: 'user', parts: [{ text: 'Match the page to this mockup.' }, { inlineData: { mimeType: 'image/png', data: base64(png(800, 600)) } }, { fileData: { mimeType: 'application/pdf', fileUri: 'gs://bucket/spec.pdf' } }] },
    { role: 'model', parts: [{ text: filler(1) }, { functionCall: { id: 'c1', name: 'read', args: { path: 'page.tsx', ...LOOKALIKES } } }] },
    { role: 'user', parts: [{ functionResponse: { id: 'c1', name: 'read', response: { output: filler(2) } } }] },
    { role: 'model', parts: [{ text: filler(3) }] },
    { role: 'user', parts: [{ text: filler(4) }] },
    { role: 'model', parts: [{ text: filler(5) }] },
    { role: 'user', parts: [{ text: 'And this one.' }, { inlineData: { mimeType: 'image/png', data: base64(png(1024, 768)) } }] },
    { role: 'model', parts: [{ text: 'Done.' }] },
  ],
  bedrock: () => [
    {
      role: 'user',
      content: [
        { text: 'Match the page to this mockup and the spec.' },
        { image: { format: 'png', source: { bytes: png(800, 600) } } },
        { document: { format: 'pdf', name: 'spec', source: { bytes: PDF } } },
      ],
    },
    { role: 'assistant', content: [{ text: filler(1) }, { toolUse: { toolUseId: 'c1', name: 'read', input: { path: 'page.tsx', ...LOOKALIKES } } }] },
    { role: 'user', content: [{ toolResult: { toolUseId: 'c1', content: [{ text: filler(2) }, { image: { format: 'png', source: { bytes: png(200, 100) } } }] } }] },
    { role: 'assistant', content: [{ text: filler(3) }] },
    { role: 'user', content: [{ text: filler(4) }] },
    { role: 'assistant', content: [{ text: filler(5) }] },
    { role: 'user', content: [{ text: 'And this one.' }, { image: { format: 'png', source: { bytes: png(1024, 768) } } }] },
    { role: 'assistant', content: [{ text: 'Done.' }] },
  ],
  'openai-responses': () => [
    {
      role: 'user',
      content: [
        { type: 'input_text', text: 'Match the page to this mockup and the spec.' },
        { type: 'input_image', image_url: dataUrl(png(800, 600), 'image/png'), detail: 'high' },
        { type: 'input_file', file_data: dataUrl(PDF, 'application/pdf'), filename: 'spec.pdf' },
      ],
    },
    { type: 'function_call', call_id: 'c1', name: 'read', arguments: JSON.stringify({ path: 'page.tsx', ...LOOKALIKES }) },
    { type: 'function_call_output', call_id: 'c1', output: filler(2) },
    { role: 'assistant', content: [{ type: 'output_text', text: filler(3) }] },
    { role: 'user', content: [{ type: 'input_text', text: filler(4) }] },
    { role: 'assistant', content: [{ type: 'output_text', text: filler(5) }] },
    { role: 'user', content: [{ type: 'input_text', text: 'And this one.' }, { type: 'input_image', image_url: dataUrl(png(1024, 768), 'image/png'), detail: 'auto' }] },
    { role: 'assistant', content: [{ type: 'output_text', text: 'Done.' }] },
  ],
  anthropic: () => [
    { role: 'user', content: [{ type: 'text', text: 'Match the page to this mockup.' }, { type: 'image', source: { type: 'base64', media_type: 'image/png', data: base64(png(800, 600)) } }] },
    { role: 'assistant', content: [{ type: 'text', text: filler(1) }, { type: 'tool_use', id: 'c1', name: 'read', input: { path: 'page.tsx', ...LOOKALIKES } }] },
    { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'c1', content: filler(2) }] },
    { role: 'assistant', content: filler(3) },
    { role: 'user', content: filler(4) },
    { role: 'assistant', content: filler(5) },
    { role: 'user', content: [{ type: 'text', text: 'And this one.' }, { type: 'image', source: { type: 'base64', media_type: 'image/png', data: base64(png(1024, 768)) } }] },
    { role: 'assistant', content: 'Done.' },
  ],
}

const OPTIONS = { provider: 'extractive' as const, force: true, contextTokenLimit: 20_000, tailRetentionRatio: 0.06, thinking: 'keep' as const }
const normalized = (summary: string) => summary.replace(/compact-\d{8}T\d{6}Z-\d+\.json/g, 'ARCHIVE').replace(/\/[^\s)]*\/(?=ARCHIVE)/g, '')

describe.each(Object.keys(FORMATS))('%s: binary parts round trip', (format) => {
  it('are archived with their type and restored as the same type and bytes; compacting again sends the model the same parts', async () => {
    const input = FORMATS[format]()
    const original = FORMATS[format]() // an untouched copy to compare with (the input is never mutated)
    const outputDir = tempDir('cc-binary-')
    const once = await compactMessages(input, { ...OPTIONS, outputDir, sessionId: 's1' })
    expect(once.error, JSON.stringify(once.error)).toBeNull()
    expect(once.compacted).toBe(true)
    expect(differences(input, original)).toEqual([])
    // Kept messages are the caller's own objects.
    const kept = once.messages.filter((m) => input.includes(m))
    expect(kept.length).toBe(once.stats.retainedMessageCount)
    expect(kept.length).toBeGreaterThan(0)

    const restored = await restoreMessages(once.messages, { outputDir, sessionId: 's1' })
    expect(differences(restored, original)).toEqual([])
    expect(countTokens(restored as Msg[])).toBe(countTokens(original))
    if (format === 'ai-sdk') {
      for (const m of [...restored, ...once.messages]) expect(modelMessageSchema.safeParse(m).success, JSON.stringify(m).slice(0, 200)).toBe(true)
    }

    // Compacting the restored list again: the same cut, the same summary, the same parts kept.
    const again = await compactMessages(restored as Msg[], { ...OPTIONS, outputDir: tempDir('cc-binary-'), sessionId: 's2' })
    expect(again.compacted).toBe(true)
    // (The token counts may differ by the archive's name in the summary.)
    for (const key of ['originalTokenCount', 'compactedMessageCount', 'retainedMessageCount', 'removedMessageCount'] as const) expect(again.stats[key]).toBe(once.stats[key])
    expect(normalized(again.summary!)).toBe(normalized(once.summary!))
    const keptAgain = again.messages.filter((m) => (restored as Msg[]).includes(m))
    expect(again.messages.map((m) => (restored as Msg[]).indexOf(m))).toEqual(once.messages.map((m) => input.indexOf(m)))
    expect(differences(keptAgain, kept)).toEqual([])
  })
})

describe('binary parts', () => {
  it('are counted as the image or document they are, whatever type carries the bytes', () => {
    const bytes = png(800, 600, 60_000)
    const message = (image: unknown) => [{ role: 'user', content: [{ type: 'text', text: 'Look.' }, { type: 'image', image, mediaType: 'image/png' }] }] as Msg[]
    const asBase64 = countTokens(message(base64(bytes)))
    // Anthropic's rule (no model named): ≈ width × height / 750 = 640 tokens, not 60 KB of digits.
    expect(asBase64).toBeGreaterThan(640)
    expect(asBase64).toBeLessThan(700)
    for (const carrier of [bytes, bytes.buffer, Buffer.from(bytes), dataUrl(bytes, 'image/png'), new Uint8Array(bytes.buffer.slice(0))]) {
      expect(countTokens(message(carrier)), kindOf(carrier)).toBe(asBase64)
    }
    // A view into a larger buffer is its own bytes only.
    const larger = new Uint8Array(bytes.length + 100)
    larger.set(bytes, 50)
    expect(countTokens(message(larger.subarray(50, 50 + bytes.length)))).toBe(asBase64)
    // Bedrock's bytes are counted the same way.
    const bedrock = (b: unknown) => [{ role: 'user', content: [{ text: 'Look.' }, { image: { format: 'png', source: { bytes: b } } }] }] as Msg[]
    expect(countTokens(bedrock(bytes))).toBe(countTokens(bedrock(base64(bytes))))
  })

  it('a changed kept message (the thinking policy) gives its bytes back as bytes', async () => {
    const input = FORMATS['ai-sdk']()
    const result = await compactMessages(input, { ...OPTIONS, thinking: 'strip', outputDir: tempDir('cc-binary-') })
    expect(result.compacted).toBe(true)
    const changed = result.messages.filter((m: Msg) => m.role === 'assistant' && !input.includes(m))
    expect(changed.length).toBe(1)
    const file = (changed[0] as Msg).content.find((p: Msg) => p.type === 'file')
    expect(differences(file.data, new Uint8Array([9, 8, 7]))).toEqual([])
    expect((changed[0] as Msg).content.some((p: Msg) => p.type === 'reasoning')).toBe(false)
    for (const m of result.messages) expect(modelMessageSchema.safeParse(m).success).toBe(true)
  })

  it("the caller's objects that look like the archive's tags come back as the same plain objects", async () => {
    const input = FORMATS.anthropic()
    const outputDir = tempDir('cc-binary-')
    const result = await compactMessages(input, { ...OPTIONS, outputDir })
    const restored = (await restoreMessages(result.messages, { outputDir })) as Msg[]
    const input1 = restored[1].content[1].input
    expect(differences(input1, { path: 'page.tsx', ...LOOKALIKES })).toEqual([])
    expect(input1.asTag).not.toBeInstanceOf(Uint8Array)
    expect(input1.asUrl).not.toBeInstanceOf(URL)
  })

  it("a Compactor's cached counts follow bytes changed in place", async () => {
    const bytes = png(100, 100, 4_000)
    const messages: Msg[] = [{ role: 'user', content: [{ type: 'text', text: 'Look.' }, { type: 'image', image: bytes.buffer, mediaType: 'image/png' }] }]
    const compactor = new Compactor({ contextTokenLimit: 200_000, outputDir: tempDir('cc-binary-') })
    const before = compactor.countTokens(messages)
    expect(compactor.countTokens(messages)).toBe(before)
    // A larger image written into the same ArrayBuffer: counted again.
    new Uint8Array(bytes.buffer).set(png(1000, 1000, 40).subarray(0, 33))
    expect(compactor.countTokens(messages)).toBe(countTokens(messages))
    expect(compactor.countTokens(messages)).toBeGreaterThan(before)
  })
})
