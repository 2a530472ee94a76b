// Fills every <x-extension point="..."> anchor from the web UI manifest, in manifest order:
// an HTML component is inserted into its own slot, a JavaScript module is imported and its
// default export called with a context object. One failing module (a syntax error, a throw)
// is recorded on its slot and in `window.hookpointErrors`; the others still run. When the
// server pushes a `manifest` message, only the anchors whose assets changed are re-rendered.

const rendered = new Map(); // anchor element -> the asset hashes it shows
const pending = new Map(); // request id -> resolve
let socket = null;
let nextId = 1;
let opened;
let ready = new Promise((resolve) => (opened = resolve));
window.hookpointErrors = [];

function assetUrl(asset) {
  const file = asset.path.split("/").pop();
  return `/webui/assets/${asset.hash}/${encodeURIComponent(file)}`;
}

// Sends an event to the server's `webui_ws_event` point; resolves with the extensions' reply.
// Waits up to 5 s for the socket to open.
async function send(event, data = null) {
  const timeout = new Promise((_, reject) => setTimeout(() => reject(new Error("not connected")), 5000));
  await Promise.race([ready, timeout]);
  return new Promise((resolve, reject) => {
    if (socket.readyState !== WebSocket.OPEN) {
      reject(new Error("not connected"));
      return;
    }
    const id = nextId++;
    pending.set(id, resolve);
    socket.send(JSON.stringify({ type: "event", id, event, data }));
  });
}

function failed(slot, asset, error) {
  slot.dataset.error = String(error);
  slot.textContent = `${asset.path} failed: ${error}`;
  window.hookpointErrors.push({ point: asset.point, path: asset.path, error: String(error) });
  console.error(`web UI extension ${asset.point}/${asset.path} failed:`, error);
}

async function render(anchor, assets) {
  const slots = assets.map((asset) => {
    const slot = document.createElement("div");
    slot.className = "x-extension-asset";
    slot.dataset.path = asset.path;
    slot.dataset.layer = asset.layer;
    return slot;
  });
  // Fetch HTML first, then swap the whole anchor at once (no half-rendered anchor).
  await Promise.all(assets.map(async (asset, i) => {
    if (asset.kind !== "html") return;
    try {
      const res = await fetch(assetUrl(asset));
      if (!res.ok) throw new Error(`HTTP ${res.status}`);
      slots[i].innerHTML = await res.text();
    } catch (e) {
      failed(slots[i], asset, e);
    }
  }));
  anchor.replaceChildren(...slots);
  for (const [i, asset] of assets.entries()) {
    if (asset.kind !== "module") continue;
    try {
      const module = await import(assetUrl(asset));
      if (typeof module.default === "function") {
        await module.default({ point: asset.point, asset, anchor, slot: slots[i], send });
      }
    } catch (e) {
      failed(slots[i], asset, e);
    }
  }
}

async function refresh() {
  const res = await fetch("/webui/manifest.json", { cache: "no-store" });
  const manifest = await res.json();
  for (const anchor of document.querySelectorAll("x-extension[point]")) {
    const assets = manifest.points[anchor.getAttribute("point")] || [];
    const signature = assets.map((a) => `${a.path}@${a.hash}`).join(" ");
    if (rendered.get(anchor) === signature) continue;
    rendered.set(anchor, signature);
    await render(anchor, assets);
  }
  document.getElementById("generation").textContent = manifest.generation;
  document.body.dataset.generation = manifest.generation;
}

function connect() {
  socket = new WebSocket(`ws://${location.host}/ws`);
  socket.onmessage = (e) => {
    const msg = JSON.parse(e.data);
    if (msg.type === "hello") {
      document.getElementById("socket").textContent = msg.reply?.greeting ?? `connected as ${msg.client}`;
      document.body.dataset.client = msg.client;
    } else if (msg.type === "reply" && pending.has(msg.id)) {
      pending.get(msg.id)(msg.reply);
      pending.delete(msg.id);
    } else if (msg.type === "manifest") {
      refresh();
    }
  };
  socket.onclose = () => {
    ready = new Promise((resolve) => (opened = resolve));
    document.getElementById("socket").textContent = "disconnected; retrying…";
    setTimeout(connect, 1000);
  };
  // A reconnect may have missed pushes: catch up (only changed anchors re-render).
  socket.onopen = () => {
    opened();
    refresh();
  };
}

connect();
await refresh();
document.body.dataset.loaded = "true";
