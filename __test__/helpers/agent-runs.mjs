// The tests that drive the real pi agent (agent-e2e, pi-cli, pi-native, pi-tui) spawn it with
// Node 22 and Node 24 themselves, whatever Node runs the suite. scripts/test-node-versions.js
// runs the whole suite again under Node 22 and 24; there those tests would only repeat the same
// agent runs, so they skip, saying why.
export const AGENT_RUNS_DONE =
  process.env.PI_TEST_AGENT_RUNS_DONE === "1"
    ? "the suite's first run already drove the agent on Node 22 and 24 (scripts/test-node-versions.js reruns)"
    : null;
