// The memory plugin's dashboard, a web UI extension on the `memory` anchor (Agent Zero's memory
// sidebar entry): lists the scope's memories, searches them, deletes one. It talks to the
// plugin's `memory_dashboard` extension on `webui_ws_event` through `ctx.send`.
export default async function memoryDashboard(ctx) {
  const slot = ctx.slot;
  slot.classList.add("memory-dashboard");
  slot.innerHTML = `
    <form class="memory-search">
      <input type="search" name="q" placeholder="Search memories" aria-label="Search memories">
      <button type="submit">Search</button>
      <button type="button" class="memory-all">All</button>
    </form>
    <p class="memory-summary">loading…</p>
    <ul class="memory-list"></ul>`;
  const list = slot.querySelector(".memory-list");
  const summary = slot.querySelector(".memory-summary");

  // A reply the plugin could not give (disabled: no reply; a store error: `error`).
  const failed = (reply) => {
    if (reply && !reply.error) return false;
    summary.textContent = `memory: ${reply ? reply.error : "no answer (is the plugin enabled?)"}`;
    return true;
  };

  const item = (memory) => {
    const li = document.createElement("li");
    li.dataset.id = memory.id;
    const text = document.createElement("span");
    text.className = "memory-text";
    text.textContent = `${memory.kind}: ${memory.text}`;
    const remove = document.createElement("button");
    remove.className = "memory-delete";
    remove.textContent = "Delete";
    remove.onclick = async () => {
      const reply = await ctx.send("memory.delete", { id: memory.id });
      if (!failed(reply)) await showAll();
    };
    li.append(text, " ", remove);
    return li;
  };

  const show = (memories, text) => {
    summary.textContent = text;
    list.replaceChildren(...memories.map(item));
  };

  const showAll = async () => {
    const reply = await ctx.send("memory.list", { limit: 50 });
    if (!failed(reply)) show(reply.memories, `${reply.total} memories`);
  };

  slot.querySelector(".memory-search").onsubmit = async (event) => {
    event.preventDefault();
    const query = event.target.q.value;
    const reply = await ctx.send("memory.search", { query, limit: 10 });
    if (!failed(reply)) show(reply.memories, `${reply.memories.length} found for “${query}”`);
  };
  slot.querySelector(".memory-all").onclick = showAll;
  await showAll();
}
