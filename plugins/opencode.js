// ── hookd's OpenCode plugin (plugins/opencode.js) ─────────────────────────
//
// Relays OpenCode's plugin hooks to the daemon (dialect:
// protocol/src/agent/opencode/) and executes the answer: a block throws,
// and OpenCode gives the model the message as the tool's failed result.
// The input is OpenCode's own event under the shared keys
// (protocol/src/agent/plugin.rs).

export const HookdPlugin = async ({ directory }) => {
  const hookd = new HookdClient({
    harness: "opencode",
    failClosed: HOOKD_CONFIG.failClosed,
    deadlineMs: HOOKD_CONFIG.deadlineMs,
    name: "opencode-plugin",
  });
  const cwd = directory || process.cwd();
  const observe = (name, session, extra = {}) =>
    hookd.hook({ hook_event_name: name, session_id: session, cwd, ...extra }, { wait: false });
  return {
    "tool.execute.before": async (input, output) => {
      const answer = await hookd.hook(
        {
          hook_event_name: "tool.execute.before",
          session_id: input.sessionID,
          cwd,
          tool_name: input.tool,
          tool_input: output.args,
          tool_use_id: input.callID,
        },
        { toolCall: true },
      );
      if (answer && answer.block) throw new Error(answer.reason);
    },
    "tool.execute.after": async (input, output) => {
      await observe("tool.execute.after", input.sessionID, {
        tool_name: input.tool,
        tool_use_id: input.callID,
        tool_response: { title: output.title, output: output.output },
      });
    },
    "chat.message": async (input, output) => {
      const prompt = (output.parts || [])
        .filter((p) => p.type === "text")
        .map((p) => p.text)
        .join("\n");
      await observe("chat.message", input.sessionID, { prompt });
    },
    event: async ({ event }) => {
      const props = event.properties || {};
      switch (event.type) {
        case "session.created":
        case "session.deleted":
          await observe(event.type, props.info && props.info.id);
          break;
        case "session.idle":
          await observe(event.type, props.sessionID);
          break;
        default:
          break;
      }
    },
  };
};
