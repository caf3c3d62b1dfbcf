// Tests never reach a real API: zero-configuration must not pick up a developer's or CI's keys.
// (Tests of zero-configuration set these variables themselves.)
delete process.env.ANTHROPIC_API_KEY
delete process.env.OPENAI_API_KEY
delete process.env.ANTHROPIC_BASE_URL
delete process.env.OPENAI_BASE_URL
