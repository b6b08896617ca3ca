// ── hookd's Pi extension (plugins/pi.js) ──────────────────────────────────
//
// Relays the Pi coding agent's extension events to the daemon (dialect:
// protocol/src/agent/pi/) and returns the answer as the handler's result:
// {block: true, reason} stops the tool, and the model gets the reason.
// The input is Pi's own event under the shared keys
// (protocol/src/agent/plugin.rs).

export default function hookdExtension(pi) {
  const hookd = new HookdClient({
    harness: "pi",
    failClosed: HOOKD_CONFIG.failClosed,
    deadlineMs: HOOKD_CONFIG.deadlineMs,
    name: "pi-extension",
  });
  const base = (name, ctx) => {
    let session;
    try {
      session = ctx.sessionManager.getSessionId();
    } catch {
      session = undefined;
    }
    return { hook_event_name: name, session_id: session, cwd: ctx.cwd };
  };
  pi.on("tool_call", async (event, ctx) => {
    const answer = await hookd.hook(
      {
        ...base("tool_call", ctx),
        tool_name: event.toolName,
        tool_input: event.input,
        tool_use_id: event.toolCallId,
      },
      { toolCall: true },
    );
    return answer && answer.block ? { block: true, reason: answer.reason } : undefined;
  });
  pi.on("tool_result", async (event, ctx) => {
    await hookd.hook(
      {
        ...base("tool_result", ctx),
        tool_name: event.toolName,
        tool_input: event.input,
        tool_use_id: event.toolCallId,
        is_error: event.isError,
      },
      { wait: false },
    );
  });
  pi.on("input", async (event, ctx) => {
    await hookd.hook({ ...base("input", ctx), prompt: event.text, source: event.source }, { wait: false });
  });
  pi.on("session_start", async (event, ctx) => {
    await hookd.hook({ ...base("session_start", ctx), reason: event.reason }, { wait: false });
  });
  pi.on("agent_end", async (_event, ctx) => {
    await hookd.hook(base("agent_end", ctx), { wait: false });
  });
  pi.on("session_shutdown", async (event, ctx) => {
    await hookd.hook({ ...base("session_shutdown", ctx), reason: event.reason }, { wait: false });
  });
}
