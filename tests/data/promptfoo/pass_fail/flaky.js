// A local provider: echoes the prompt, and fails (as an API error would) when the prompt says BOOM.
class Flaky {
  id() { return 'flaky-echo'; }
  async callApi(prompt) {
    if (prompt.includes('BOOM')) return { error: 'API error: 503 the provider is overloaded' };
    return { output: prompt };
  }
}
module.exports = Flaky;
