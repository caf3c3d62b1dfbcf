// isContextOverflow (SPEC §4.8): the providers' "prompt too long" errors, as each SDK hands them
// to the agent loop. Bodies and messages are real ones, quoted from the issue threads named above
// each case; the error objects are built the way the SDKs build them.

import Anthropic from '@anthropic-ai/sdk'
import OpenAI from 'openai'
import { APICallError, RetryError } from 'ai'
import { describe, expect, it } from 'vitest'

import { isContextOverflow } from '../../index'

const headers = () => new Headers({ 'request-id': 'req_test', 'x-request-id': 'req_test' })

/** How @anthropic-ai/sdk turns a non-2xx response into an error (client.makeStatusError). */
const anthropicError = (status: number, body: unknown) =>
  Anthropic.APIError.generate(status, body as object, undefined, headers())

/** How the openai SDK does it: the body's `error` member becomes `.error`, `.code`, `.type`. */
const openaiError = (status: number, body: unknown) => OpenAI.APIError.generate(status, body as object, undefined, headers())

/** How the Vercel AI SDK's providers do it (postToApi + the provider's failed-response handler). */
const aiSdkError = (statusCode: number, body: unknown, message: string) =>
  new APICallError({
    message,
    url: 'https://api.example.com/v1/chat/completions',
    requestBodyValues: { messages: [{ role: 'user', content: 'secret prompt is too long words' }] },
    statusCode,
    responseHeaders: { 'content-type': 'application/json' },
    responseBody: JSON.stringify(body),
    data: body,
  })

/** @google/genai's ApiError (src/errors.ts): `status` and the JSON body as the message. */
class GoogleApiError extends Error {
  status: number
  constructor(options: { message: string; status: number }) {
    super(options.message)
    this.name = 'ApiError'
    this.status = options.status
  }
}
const googleError = (status: number, body: unknown) => new GoogleApiError({ message: JSON.stringify(body), status })

/** An AWS SDK v3 service exception (@aws-sdk/client-bedrock-runtime), as it is thrown. */
const bedrockError = (name: string, message: string, httpStatusCode: number) =>
  Object.assign(new Error(message), {
    name,
    $fault: httpStatusCode >= 500 ? 'server' : 'client',
    $metadata: { httpStatusCode, requestId: '16fb0962-139d-4c70-ba9c-602d9630e854', attempts: 1, totalRetryDelay: 0 },
  })

describe('isContextOverflow recognises', () => {
  it('Anthropic: "prompt is too long" (earendil-works/pi#102)', () => {
    const body = {
      type: 'error',
      error: { type: 'invalid_request_error', message: 'prompt is too long: 219898 tokens > 200000 maximum' },
      request_id: 'req_011CVjxiYzEFcAQC4Fk87zw2',
    }
    const error = anthropicError(400, body)
    expect(error).toBeInstanceOf(Anthropic.BadRequestError)
    expect(isContextOverflow(error)).toBe(true)
    // The same body through the Vercel AI SDK (stackblitz-labs/bolt.diy#401) and raw.
    expect(isContextOverflow(aiSdkError(400, body, 'prompt is too long: 219898 tokens > 200000 maximum'))).toBe(true)
    expect(isContextOverflow(body)).toBe(true)
    expect(isContextOverflow(JSON.stringify(body))).toBe(true)
    expect(isContextOverflow('prompt is too long: 219898 tokens > 200000 maximum')).toBe(true)
  })

  it('Anthropic: input + max_tokens over the window (continuedev/continue#6080)', () => {
    const body = {
      type: 'error',
      error: {
        type: 'invalid_request_error',
        message:
          'input length and `max_tokens` exceed context limit: 199759 + 8192 > 200000, decrease input length or `max_tokens` and try again',
      },
    }
    expect(isContextOverflow(anthropicError(400, body))).toBe(true)
  })

  it('OpenAI Chat Completions: context_length_exceeded (ChatGPTNextWeb/NextChat#2358)', () => {
    const body = {
      error: {
        message:
          "This model's maximum context length is 16385 tokens. However, your messages resulted in 16468 tokens. Please reduce the length of the messages.",
        type: 'invalid_request_error',
        param: 'messages',
        code: 'context_length_exceeded',
      },
    }
    const error = openaiError(400, body)
    expect(error).toBeInstanceOf(OpenAI.BadRequestError)
    expect(isContextOverflow(error)).toBe(true)
  })

  it('OpenAI Responses: "Your input exceeds the context window" (anomalyco/opencode#6071)', () => {
    const body = {
      error: {
        type: 'invalid_request_error',
        code: 'context_length_exceeded',
        message: 'Your input exceeds the context window of this model. Please adjust your input and try again.',
        param: 'input',
      },
    }
    expect(isContextOverflow(openaiError(400, body))).toBe(true)
    // The streamed error event as an app logged it.
    expect(
      isContextOverflow(
        '{"type":"error","sequence_number":2,"error":{"type":"invalid_request_error","code":"context_length_exceeded","message":"Your input exceeds the context window of this model. Please adjust your input and try again.","param":"input"}}',
      ),
    ).toBe(true)
  })

  it('DeepSeek through the Vercel AI SDK (FoundationAgents/OpenManus#79, jina-ai/node-DeepResearch#87)', () => {
    const message =
      "This model's maximum context length is 65536 tokens. However, you requested 66343 tokens (62247 in the messages, 4096 in the completion). Please reduce the length of the messages or completion."
    const body = { error: { message, type: 'invalid_request_error', param: null, code: 'invalid_request_error' } }
    expect(isContextOverflow(aiSdkError(400, body, message))).toBe(true)
  })

  it('OpenRouter through the openai SDK (refly-ai/refly#1177)', () => {
    const body = {
      error: {
        message:
          'This endpoint\'s maximum context length is 32768 tokens. However, you requested about 42832 tokens (42832 of text input). Please reduce the length of either one, or use the "middle-out" transform to compress your prompt automatically.',
        code: 400,
      },
    }
    expect(isContextOverflow(openaiError(400, body))).toBe(true)
  })

  it('Groq (context_length_exceeded, UKGovernmentBEIS/inspect_ai)', () => {
    const body = {
      error: {
        message: 'Please reduce the length of the messages or completion.',
        type: 'invalid_request_error',
        code: 'context_length_exceeded',
      },
    }
    expect(isContextOverflow(openaiError(400, body))).toBe(true)
  })

  it('Mistral through the Vercel AI SDK (discuss.google.dev/t/165446)', () => {
    const message = 'Prompt contains 65673 tokens, too large for model with 32768 maximum context length'
    const body = { object: 'Error', message, type: 'invalid_request_error', code: 3051 }
    expect(isContextOverflow(aiSdkError(400, body, message))).toBe(true)
  })

  it('xAI through the openai SDK (cline/cline#3120)', () => {
    const error = openaiError(400, {
      error: "This model's maximum prompt length is 131072 but the request contains 136973 tokens.",
    })
    expect(error.message).toBe('400 "This model\'s maximum prompt length is 131072 but the request contains 136973 tokens."')
    expect(isContextOverflow(error)).toBe(true)
  })

  it('Gemini API through @google/genai (google-gemini/gemini-cli#4118)', () => {
    const body = {
      error: {
        code: 400,
        message: 'The input token count (132478) exceeds the maximum number of tokens allowed (131072).',
        status: 'INVALID_ARGUMENT',
      },
    }
    expect(isContextOverflow(googleError(400, body))).toBe(true)
    // The CLI's own wording of it.
    expect(
      isContextOverflow(
        'got status: INVALID_ARGUMENT. {"error":{"code":400,"message":"The input token count (132478) exceeds the maximum number of tokens allowed (131072).","status":"INVALID_ARGUMENT"}}',
      ),
    ).toBe(true)
  })

  it('Vertex AI (googleapis/python-genai#2466; the list body of google-gemini/gemini-cli#6678)', () => {
    expect(
      isContextOverflow(
        googleError(400, {
          error: {
            code: 400,
            message: 'The input token count (81881) exceeds the maximum number of tokens allowed (65536).',
            status: 'INVALID_ARGUMENT',
          },
        }),
      ),
    ).toBe(true)
    const list = [
      {
        error: {
          code: 400,
          message: 'The input token count (1200293) exceeds the maximum number of tokens allowed (1048576).',
          errors: [
            {
              message: 'The input token count (1200293) exceeds the maximum number of tokens allowed (1048576).',
              domain: 'global',
              reason: 'badRequest',
            },
          ],
          status: 'INVALID_ARGUMENT',
        },
      },
    ]
    expect(isContextOverflow(list)).toBe(true)
  })

  it('Bedrock ValidationException (aws-samples/assessment-generator#2, daisuke-awaji/moca#254)', () => {
    expect(isContextOverflow(bedrockError('ValidationException', 'Input is too long for requested model.', 400))).toBe(true)
    expect(
      isContextOverflow(
        bedrockError(
          'ValidationException',
          'The model returned the following errors: prompt is too long: 200049 tokens > 200000 maximum',
          400,
        ),
      ),
    ).toBe(true)
    expect(
      isContextOverflow(
        bedrockError(
          'ValidationException',
          '400 Bad Request: Too many input tokens. Max input tokens: 8192, request input token count: 9279 ',
          400,
        ),
      ),
    ).toBe(true)
  })

  it('Ollama with truncate: false (an Ollama API error as a client reported it)', () => {
    expect(
      isContextOverflow(
        new Error(
          'Ollama API error 400: {"StatusCode":400,"Status":"400 Bad Request","error":"prompt too long; exceeded max context length by 4 tokens"}',
        ),
      ),
    ).toBe(true)
  })

  it('llama.cpp server (ggml-org/llama.cpp#15780, oobabooga/textgen#7257)', () => {
    const body = {
      error: {
        code: 400,
        message: 'the request exceeds the available context size. try increasing the context size or enable context shift',
        type: 'exceed_context_size_error',
        n_prompt_tokens: 14429,
        n_ctx: 8192,
      },
    }
    expect(isContextOverflow(openaiError(400, body))).toBe(true)
  })

  it('vLLM (vllm-project/vllm#33425, #20409)', () => {
    const body = {
      error: {
        message:
          "This model's maximum context length is 2048 tokens. However, your request has 8 input tokens plus 2045 'max_tokens'. Please reduce one or the other. (parameter=input_tokens, max_tokens, value=(8, 2045))",
        type: 'BadRequestError',
        param: 'input_tokens, max_tokens',
        code: 400,
      },
    }
    expect(isContextOverflow(openaiError(400, body))).toBe(true)
    expect(
      isContextOverflow(
        "ValueError: This model's maximum context length is 16384 tokens. However, you requested 122946 tokens (112946 in the messages, 10000 in the completion). Please reduce the length of the messages or completion.",
      ),
    ).toBe(true)
  })

  it('an overflow anywhere in the cause chain, or after retries', () => {
    const api = anthropicError(400, {
      type: 'error',
      error: { type: 'invalid_request_error', message: 'prompt is too long: 202609 tokens > 200000 maximum' },
    })
    expect(isContextOverflow(new Error('agent step failed', { cause: new Error('request failed', { cause: api }) }))).toBe(
      true,
    )
    const deepSeek =
      "This model's maximum context length is 65536 tokens. However, you requested 66343 tokens (62247 in the messages, 4096 in the completion). Please reduce the length of the messages or completion."
    const retry = new RetryError({
      message: `Failed after 3 attempts. Last error: ${deepSeek}`,
      reason: 'maxRetriesExceeded',
      errors: [new Error('socket hang up'), aiSdkError(400, { error: { message: deepSeek } }, deepSeek)],
    })
    expect(isContextOverflow(retry)).toBe(true)
    // A fetch-style failure: the status and the body as a string.
    expect(
      isContextOverflow({
        status: 400,
        body: '{"error":{"message":"Your input exceeds the context window of this model. Please adjust your input and try again.","code":"context_length_exceeded"}}',
      }),
    ).toBe(true)
  })

  it('through the ES module entry', async () => {
    const esm = await import('../../index.mjs')
    expect(esm.isContextOverflow('prompt is too long: 219898 tokens > 200000 maximum')).toBe(true)
    expect(esm.default.isContextOverflow(null)).toBe(false)
  })
})

describe('isContextOverflow is false for', () => {
  it('rate limits, even when they speak of tokens', () => {
    // anthropics/claude-code#71670
    expect(
      isContextOverflow(
        anthropicError(429, {
          type: 'error',
          error: { type: 'rate_limit_error', message: "This request would exceed your account's rate limit. Please try again later." },
        }),
      ),
    ).toBe(false)
    // OpenAI's per-minute token limit: "Request too large ... The input or output tokens must be reduced".
    expect(
      isContextOverflow(
        openaiError(429, {
          error: {
            message:
              'Request too large for gpt-4o in organization org-x on tokens per min (TPM): Limit 30000, Requested 50000. The input or output tokens must be reduced in order to run successfully.',
            type: 'tokens',
            param: null,
            code: 'rate_limit_exceeded',
          },
        }),
      ),
    ).toBe(false)
    // Groq answers a per-minute limit with 413 (ITSpecialist111/ai_automation_suggester#61).
    expect(
      isContextOverflow(
        openaiError(413, {
          error: {
            message:
              'Request too large for model `llama-3.3-70b-versatile` in organization `org_01jp8byqwpfx9sp1m0dbhb6a1e` service tier `on_demand` on tokens per minute (TPM): Limit 6000, Requested 14810, please reduce your message size and try again. Visit https://console.groq.com/docs/rate-limits for more information.',
            type: 'tokens',
            code: 'rate_limit_exceeded',
          },
        }),
      ),
    ).toBe(false)
    // Bedrock throttling.
    expect(isContextOverflow(bedrockError('ThrottlingException', 'Too many tokens, please wait before trying again.', 429))).toBe(
      false,
    )
  })

  it('spend limits and quotas', () => {
    const spendCap = {
      type: 'error',
      error: {
        type: 'rate_limit_error',
        message: 'You have reached your API usage limits. You will regain access on 2026-11-01 at 00:00 UTC.',
        details: { error_code: 'enforced_spend_limit_reached' },
      },
    }
    expect(isContextOverflow(anthropicError(429, spendCap))).toBe(false)
    expect(
      isContextOverflow(
        openaiError(429, {
          error: {
            message: 'You exceeded your current quota, please check your plan and billing details.',
            type: 'insufficient_quota',
            param: null,
            code: 'insufficient_quota',
          },
        }),
      ),
    ).toBe(false)
  })

  it('authentication errors', () => {
    expect(
      isContextOverflow(anthropicError(401, { type: 'error', error: { type: 'authentication_error', message: 'invalid x-api-key' } })),
    ).toBe(false)
    expect(
      isContextOverflow(
        openaiError(401, {
          error: { message: 'Incorrect API key provided: sk-test. You can find your API key at https://platform.openai.com/account/api-keys.', type: 'invalid_request_error', param: null, code: 'invalid_api_key' },
        }),
      ),
    ).toBe(false)
  })

  it('other 400s', () => {
    expect(
      isContextOverflow(
        anthropicError(400, {
          type: 'error',
          error: { type: 'invalid_request_error', message: 'messages: roles must alternate between "user" and "assistant"' },
        }),
      ),
    ).toBe(false)
    expect(
      isContextOverflow(
        anthropicError(400, {
          type: 'error',
          error: {
            type: 'invalid_request_error',
            message:
              'messages.2.content.0: unexpected `tool_use_id` found in `tool_result` blocks: toolu_01. Each `tool_result` block must have a corresponding `tool_use` block in the previous message.',
          },
        }),
      ),
    ).toBe(false)
    // A 400 without a body (pi counts it as overflow only for Cerebras).
    const bodiless = OpenAI.APIError.generate(400, undefined, undefined, headers())
    expect(bodiless.message).toBe('400 status code (no body)')
    expect(isContextOverflow(bodiless)).toBe(false)
    // A byte limit, not a token limit.
    expect(
      isContextOverflow(
        anthropicError(413, { type: 'error', error: { type: 'request_too_large', message: 'Request exceeds the maximum allowed number of bytes.' } }),
      ),
    ).toBe(false)
  })

  it('output limits: max_tokens over the model cap, or filling the window by itself', () => {
    // SWE-agent's report of Claude's output cap.
    expect(
      isContextOverflow(
        anthropicError(400, {
          type: 'error',
          error: {
            type: 'invalid_request_error',
            message: 'max_tokens: 128000 > 64000, which is the maximum allowed number of output tokens for claude-3-7-sonnet-20250219',
          },
        }),
      ),
    ).toBe(false)
    // tailcallhq/forgecode#1185
    expect(
      isContextOverflow(
        openaiError(400, {
          error: {
            message: 'max_tokens is too large: 20480. This model supports at most 16384 completion tokens, whereas you provided 20480.',
            type: 'invalid_request_error',
            param: 'max_tokens',
            code: 'invalid_value',
          },
        }),
      ),
    ).toBe(false)
    // ChatGPTNextWeb/NextChat#3195: "Hello" with max_tokens 8192 on an 8192 window.
    expect(
      isContextOverflow(
        openaiError(400, {
          error: {
            message:
              "This model's maximum context length is 8192 tokens. However, you requested 8256 tokens (64 in the messages, 8192 in the completion). Please reduce the length of the messages or completion.",
            type: 'invalid_request_error',
            param: 'messages',
            code: 'context_length_exceeded',
          },
        }),
      ),
    ).toBe(false)
  })

  it('what is not an error, and anything odd, without throwing', () => {
    for (const value of [null, undefined, 0, 42, NaN, true, '', '   ', 'ok', 10n, Symbol('x'), () => 'prompt is too long', {}, [], new Date(), new Map()]) {
      expect(isContextOverflow(value)).toBe(false)
    }
    // Cycles.
    const cyclic: any = { message: 'something failed' }
    cyclic.cause = cyclic
    cyclic.error = { parent: cyclic, error: cyclic }
    expect(isContextOverflow(cyclic)).toBe(false)
    const cyclicOverflow: any = { status: 400 }
    cyclicOverflow.cause = { cause: cyclicOverflow, message: 'prompt is too long: 1 tokens > 0 maximum' }
    expect(isContextOverflow(cyclicOverflow)).toBe(true)
    // Properties that throw, Proxies, revoked Proxies.
    const throwing = Object.defineProperty({}, 'message', {
      get() {
        throw new Error('boom')
      },
    })
    expect(isContextOverflow(throwing)).toBe(false)
    const trap = new Proxy(
      {},
      {
        get() {
          throw new Error('trap')
        },
      },
    )
    expect(isContextOverflow(trap)).toBe(false)
    const { proxy, revoke } = Proxy.revocable([], {})
    revoke()
    expect(isContextOverflow(proxy)).toBe(false)
    expect(isContextOverflow({ cause: proxy, message: 'prompt is too long' })).toBe(true)
    // Getters that make a new object on every read.
    const endless: any = {
      get cause() {
        return { cause: endless.cause, message: 'x' }
      },
    }
    expect(isContextOverflow(endless)).toBe(false)
    // Deep nesting, huge texts, huge arrays, invalid JSON.
    let deep: any = { message: 'prompt is too long' }
    for (let i = 0; i < 10_000; i++) deep = { cause: deep }
    expect(isContextOverflow(deep)).toBe(false)
    // Texts are read up to 64 KiB each: an error states its cause near the start.
    expect(isContextOverflow('x'.repeat(5_000_000) + ' prompt is too long')).toBe(false)
    expect(isContextOverflow('prompt is too long ' + 'x'.repeat(5_000_000))).toBe(true)
    expect(isContextOverflow(new Array(1_000_000).fill('ok'))).toBe(false)
    expect(isContextOverflow('{"error": {"message": "prompt is too long"')).toBe(true)
    expect(isContextOverflow({ status: 'nonsense', code: {}, message: 12 })).toBe(false)
    // The request is never read: a prompt that quotes an overflow text is not an overflow.
    const quoted = aiSdkError(401, { error: { message: 'Unauthorized' } }, 'Unauthorized')
    expect(isContextOverflow(quoted)).toBe(false)
  })
})
