// A JavaScript extension: the loader calls the default export with a context
// ({ point, asset, anchor, slot, send }). `send` goes to the server's `webui_ws_event` point.
export default async function uptime(ctx) {
  ctx.slot.classList.add("uptime");
  ctx.slot.textContent = "The uptime extension ran; asking the server…";
  try {
    const reply = await ctx.send("uptime");
    ctx.slot.textContent = `Server up for ${reply.uptime_ms} ms (${reply.answered_by}).`;
  } catch (e) {
    ctx.slot.textContent = `The uptime extension ran, but the server did not answer: ${e.message}`;
  }
}
