// The dashboard's main module: loads the fabric from the API, follows its event stream, acts.
//
// At load: GET status, topology, stats and jobs (relative URLs: the page is
// served by the API it talks to). Then one EventSource on
// `api/v1/events?kinds=EVENT_KINDS`: every "stats" event (one a poll, each
// second) recolours the graph and the open panels; "mode", "link",
// "rerouted", "switch", "reconciled", "job" update what they change
// ("clock": another server's clock went off or came back, logged); a
// "progress" event with step "up" (a fabric that was still coming up) loads
// it; "down" says the fabric has stopped. The stream reconnects by itself
// (EventSource) and everything is loaded again when it does, as the daemon
// may have been restarted. Actions: POST mode (the buttons in the header)
// and POST link (the selected link's button).
//
// `window.aizone` exposes the state for the browser test and for curious
// people at the console.

import { FabricView, portQueue } from "./graph.js";
import { clock, esc, mbps, pct, seconds, standsFor, utilGradient } from "./format.js";
import {
  countersHtml, eventLine, hostPanel, jobHtml, jobsHtml, linkPanel, routesHtml, switchPanel,
  tiersHtml,
} from "./panels.js";

export const EVENT_KINDS = ["stats", "mode", "link", "rerouted", "reconciled", "switch", "job",
  "clock", "progress", "failed", "stopping", "down"];
const COUNTERS = { rx: "FabricIngress.counters.rx_port", tx: "FabricEgress.counters.tx_port",
  drops: "FabricIngress.counters.drops" };
const DROP_REASONS = { 1: "no_route", 2: "ttl", 3: "pfc_frame", 4: "acl", 5: "not_ip", 6: "parser",
  7: "checksum" };
const STALE_AFTER_S = 3.5;

const $ = (sel) => document.querySelector(sel);

const state = {
  phase: "loading",
  topology: null,
  status: null,
  stats: null,
  statsAt: 0,
  mode: null,
  rates: {},
  selected: null,   // [kind, id]
  jobs: [],
  job: null,        // the latest collective, from its events
  events: 0,        // SSE events received
  statsEvents: 0,
};
window.aizone = state;

class ApiError extends Error {
  constructor(message, status) { super(message); this.status = status; }
}

async function api(path, options = {}) {
  const resp = await fetch(`api/v1${path}`, {
    // x-aizone-request: the daemon takes a change authenticated by the page's cookie only
    // with this header, which a cross-site form cannot send (controller/access.py).
    ...options, headers: { "content-type": "application/json", "x-aizone-request": "1",
                           ...(options.headers ?? {}) },
  });
  let body = null;
  try { body = await resp.json(); } catch { /* not JSON */ }
  if (!resp.ok) throw new ApiError(body?.error ?? `${resp.status} ${resp.statusText}`, resp.status);
  return body;
}

const view = new FabricView($("#fabric"), { onSelect: select, onHover: hover });

// --- loading -----------------------------------------------------------------------

async function load() {
  try {
    state.status = await api("/status");
  } catch (err) {
    return overlay("The controller does not answer", esc(err.message));
  }
  state.phase = state.status.phase;
  if (state.phase !== "up") {
    const what = state.phase === "failed" ? `bring-up failed: ${esc(state.status.error)}` :
      `the fabric is ${esc(state.phase)}…`;
    return overlay(state.phase === "failed" ? "The fabric did not come up" : "Waiting for the fabric", what);
  }
  const [topology, stats, jobs] = await Promise.all([api("/topology"), api("/stats"),
    api("/jobs").catch(() => [])]);
  state.topology = topology;
  state.rates = state.status.scale ?? {};
  state.jobs = jobs;
  overlay(null);
  view.draw(topology, state.rates);
  for (const s of state.status.switches ?? []) view.setSwitch(s.name, s.alive !== false);
  setMode(topology.mode);
  renderFacts();
  if (stats && stats.links) onStats(stats);
  const latest = [...jobs].sort((p, q) => q.id - p.id)[0];
  if (latest && !state.job) {
    state.job = jobFromResult(await api(`/jobs/${latest.id}`).catch(() => null)) ?? null;
  }
  renderJob();
  if (state.selected) select(...state.selected);
}

function overlay(title, text = "") {
  const box = $("#overlay");
  box.hidden = !title;
  if (title) box.innerHTML = `<div><h2>${esc(title)}</h2><p>${text}</p></div>`;
}

function renderFacts() {
  const st = state.status, t = state.topology;
  const sw = t.nodes.filter((n) => n.kind === "switch").length;
  const hosts = t.nodes.filter((n) => n.kind === "host").length;
  const down = t.edges.filter((e) => view.linkStateOf(e.id) === "failed").length;
  const line = st.scale?.line_rate_gbps;
  $("#fabric-name").textContent = t.name;
  $("#facts").innerHTML = `
    <span><b>${esc(st.target)}</b> target</span>
    <span><b>${sw}</b> switches</span><span><b>${hosts}</b> hosts</span>
    <span><b>${t.edges.length - down}</b>/${t.edges.length} links up</span>
    ${line ? `<span>emulating <b>${line}G</b> NICs</span>` : ""}`;
  document.title = `${t.name} · aizone`;
}

// --- the event stream --------------------------------------------------------------

function connect() {
  const es = new EventSource(`api/v1/events?kinds=${EVENT_KINDS.join(",")}`);
  let opened = false;
  es.onopen = () => {
    if (opened) load();  // a reconnect: the daemon may be a new one
    opened = true;
    live("live", "live");
  };
  es.onerror = () => {
    if (state.phase !== "down") live("reconnecting", "reconnecting…");
  };
  const on = (kind, fn) => es.addEventListener(kind, (msg) => {
    state.events++;
    const ev = JSON.parse(msg.data);  // {seq, kind, at, data}
    fn(ev.data, ev);
  });
  on("stats", (snap) => { state.statsEvents++; onStats(snap); });
  on("mode", (d, ev) => { setMode(d.mode); logEvent("mode", d, ev.at); });
  on("link", (d, ev) => {
    if (d.cause !== "silent") view.setLink(d.link, d.up);
    logEvent("link", d, ev.at);
    refreshSelection();
    if (state.topology) renderFacts();
  });
  on("rerouted", (d, ev) => logEvent("rerouted", d, ev.at));
  on("reconciled", (d, ev) => logEvent("reconciled", d, ev.at));
  on("switch", (d, ev) => {
    view.setSwitch(d.switch, d.phase !== "died");
    const s = state.status?.switches?.find((x) => x.name === d.switch);
    if (s) s.alive = d.phase !== "died";
    logEvent("switch", d, ev.at);
    refreshSelection();
  });
  on("job", (d, ev) => onJob(d, ev.at));
  on("clock", (d, ev) => logEvent("clock", d, ev.at));
  on("progress", (d) => {
    if (d.step === "up") load();
    else if (state.phase !== "up") overlay("Waiting for the fabric", `bring-up: ${esc(d.step)}…`);
  });
  on("failed", (d, ev) => { logEvent("failed", d, ev.at); load(); });
  on("stopping", (d, ev) => logEvent("stopping", d, ev.at));
  on("down", () => {
    state.phase = "down";
    live("down", "fabric stopped");
    overlay("The fabric has stopped", "<code>aizone down</code> ran; start it again with <code>aizone up TOPO</code> and reload.");
    es.close();
  });
}

function live(kind, text) {
  const box = $("#live");
  box.dataset.state = kind;
  $("#live-text").textContent = text;
}

setInterval(() => {
  if (state.phase !== "up" || !state.statsAt) return;
  const age = Date.now() / 1000 - state.statsAt;
  if (age > STALE_AFTER_S && $("#live").dataset.state === "live") live("stale", `no statistics for ${age.toFixed(0)} s`);
}, 1000);

function onStats(snap) {
  state.stats = snap;
  state.statsAt = Date.now() / 1000;
  if (!state.topology) return;
  view.applyStats(snap);
  $("#tiers").innerHTML = tiersHtml(snap, state.rates) + totalsHtml(snap);
  if (["live", "stale"].includes($("#live").dataset.state)) live("live", `live · ${clock(snap.at)}`);
  renderFacts();
  refreshSelection(true);
}

function totalsHtml(snap) {
  const up = (snap.links ?? []).filter((l) => l.tier === "host").reduce((s, l) => s + (l.a_to_b?.bps ?? 0), 0);
  let drops = 0;
  for (const sw of Object.values(snap.switches ?? {})) {
    for (const d of Object.values(sw.drops ?? {})) drops += d.interval ?? 0;
  }
  let pauses = 0;
  for (const sw of Object.values(snap.switches ?? {})) {
    for (const p of Object.values(sw.ports ?? {})) if (portQueue(p).paused) pauses++;
  }
  return `<div class="totals"><span>hosts send <b>${mbps(up)}</b></span>
    <span class="${drops ? "bad" : ""}"><b>${drops}</b> drops/s</span>
    <span class="${pauses ? "warn" : ""}"><b>${pauses}</b> paused port${pauses === 1 ? "" : "s"}</span></div>`;
}

// --- mode ------------------------------------------------------------------------------

function setMode(mode) {
  state.mode = mode;
  for (const b of document.querySelectorAll("#mode button")) {
    b.classList.toggle("active", b.dataset.mode === mode);
    b.setAttribute("aria-pressed", String(b.dataset.mode === mode));
  }
  $("#mode").dataset.mode = mode;
}

for (const b of document.querySelectorAll("#mode button")) {
  b.addEventListener("click", async () => {
    const mode = b.dataset.mode;
    if (mode === state.mode || $("#mode").classList.contains("busy")) return;
    $("#mode").classList.add("busy");
    b.classList.add("pending");
    try {
      const r = await api("/mode", { method: "POST", body: JSON.stringify({ mode }) });
      setMode(r.mode);
      toast(`routing mode <b>${esc(r.mode)}</b> in ${seconds(r.seconds)}`, "good");
    } catch (err) {
      toast(`mode ${esc(mode)}: ${esc(err.message)}`, "bad");
    } finally {
      $("#mode").classList.remove("busy");
      b.classList.remove("pending");
    }
  });
}

// --- selection and tooltips ------------------------------------------------------------

function select(kind, id) {
  state.selected = kind ? [kind, id] : null;
  view.select(kind, id);
  const card = $("#selection-card");
  card.hidden = !kind;
  if (!kind || !state.topology) return;
  renderSelection();
  if (kind === "switch") { readRoutes(id); readCounters(id); }
}

function ctx() {
  return { topology: state.topology, status: state.status, stats: state.stats, rates: state.rates };
}

function renderSelection() {
  const [kind, id] = state.selected;
  const box = $("#selection");
  if (kind === "switch") {
    // Keep what was read (tables, counters) when the live part is redrawn.
    const routes = $("#sel-routes")?.innerHTML, counters = $("#sel-counters")?.innerHTML;
    const same = box.dataset.id === id && box.dataset.kind === kind;
    box.innerHTML = switchPanel(id, ctx());
    if (same && routes) $("#sel-routes").innerHTML = routes;
    if (same && counters) $("#sel-counters").innerHTML = counters;
    // Open <details> stay open.
  } else if (kind === "link") {
    box.innerHTML = linkPanel(id, { ...ctx(), linkState: view.linkStateOf(id) });
  } else if (kind === "host") {
    box.innerHTML = hostPanel(id, ctx());
  }
  box.dataset.id = id;
  box.dataset.kind = kind;
}

function refreshSelection(fromStats = false) {
  if (!state.selected || !state.topology) return;
  if (fromStats && state.selected[0] === "switch") {
    // Redraw only the live ports table, not the tables and counters read on request.
    const tmp = document.createElement("div");
    tmp.innerHTML = switchPanel(state.selected[1], ctx());
    const fresh = tmp.querySelector(".ports-table"), old = $("#selection .ports-table");
    if (fresh && old) old.replaceWith(fresh);
    return;
  }
  renderSelection();
}

async function readRoutes(name) {
  const box = $("#sel-routes");
  if (box) box.innerHTML = `<span class="muted">reading ${esc(name)}'s entries over P4Runtime…</span>`;
  try {
    const data = await api(`/routes?switch=${encodeURIComponent(name)}`);
    if (state.selected?.[1] === name) $("#sel-routes").innerHTML = routesHtml(name, data);
  } catch (err) {
    if (state.selected?.[1] === name) $("#sel-routes").innerHTML = `<span class="bad">${esc(err.message)}</span>`;
  }
}

async function readCounters(name) {
  const ports = state.topology.edges.filter((e) => e.a === name || e.b === name)
    .map((e) => (e.a === name ? e.a_port : e.b_port));
  const q = ports.map((p) => `index=${p}`).join("&");
  const reasons = Object.keys(DROP_REASONS).map((i) => `index=${i}`).join("&");
  try {
    const sw = encodeURIComponent(name);
    const [rx, tx, drops] = await Promise.all([
      api(`/counters/${sw}/${COUNTERS.rx}?${q}`), api(`/counters/${sw}/${COUNTERS.tx}?${q}`),
      api(`/counters/${sw}/${COUNTERS.drops}?${reasons}`)]);
    if (state.selected?.[1] === name) {
      $("#sel-counters").innerHTML = countersHtml({ rx, tx, drops, reasons: DROP_REASONS });
    }
  } catch (err) {
    if (state.selected?.[1] === name) $("#sel-counters").innerHTML = `<span class="bad">${esc(err.message)}</span>`;
  }
}

$("#selection").addEventListener("click", async (ev) => {
  const btn = ev.target.closest("button[data-action]");
  if (!btn) return;
  const action = btn.dataset.action;
  if (action === "read-routes") readRoutes(state.selected[1]);
  if (action === "read-counters") readCounters(state.selected[1]);
  if (action === "set-link") {
    const up = btn.dataset.up === "true";
    btn.disabled = true;
    btn.textContent = up ? "restoring…" : "failing…";
    try {
      const r = await api("/link", { method: "POST", body: JSON.stringify({
        a: btn.dataset.a, b: btn.dataset.b, index: Number(btn.dataset.index), up }) });
      toast(`<code>${esc(r.link)}</code> ${up ? "restored" : "failed"}${r.reconverged_after != null ? `, routes in ${seconds(r.reconverged_after)}` : ""}`, up ? "good" : "warn");
    } catch (err) {
      toast(esc(err.message), "bad");
    }
    refreshSelection();
  }
});
$("#close-selection").addEventListener("click", () => select(null, null));

function hover(kind, id, ev) {
  const tip = $("#tooltip");
  if (!kind || !state.topology) { tip.hidden = true; return; }
  tip.innerHTML = tooltipHtml(kind, id);
  tip.hidden = false;
  const area = $("#graph-area").getBoundingClientRect();
  const x = ev.clientX - area.left + 14, y = ev.clientY - area.top + 14;
  tip.style.left = `${Math.min(x, area.width - tip.offsetWidth - 8)}px`;
  tip.style.top = `${Math.min(y, area.height - tip.offsetHeight - 8)}px`;
}

function tooltipHtml(kind, id) {
  const snap = state.stats;
  if (kind === "link") {
    const e = state.topology.edges.find((x) => x.id === id);
    const l = snap?.links?.find((x) => x.id === id);
    const scale = state.rates?.[e.tier]?.scale;
    const st = view.linkStateOf(id);
    const row = (from, to, d) => `<tr><td>${esc(from)} → ${esc(to)}</td><td class="num">${mbps(d?.bps)}</td>
      <td class="num">${pct(d?.util)}</td><td class="muted">${esc(standsFor(d?.bps, scale))}</td></tr>`;
    return `<b>${esc(e.a)}:${e.a_port} ↔ ${esc(e.b)}:${e.b_port}</b> <span class="state ${st === "up" ? "good" : "bad"}">${esc(st)}</span>
      <table>${row(e.a, e.b, l?.a_to_b)}${row(e.b, e.a, l?.b_to_a)}</table>
      <span class="muted">click to select${st === "up" ? " (and fail it)" : " (and restore it)"}</span>`;
  }
  if (kind === "port") {
    const [sw, port] = id.split("/");
    const p = snap?.switches?.[sw]?.ports?.[port];
    if (!p) return `<b>${esc(sw)} port ${esc(port)}</b><br><span class="muted">no statistics yet</span>`;
    const q = portQueue(p);
    const classes = Object.entries(p.classes ?? {}).map(([tc, c]) => `<tr><td>class ${tc}</td>
      <td class="num">${mbps(c.bps)}</td><td class="num">q ${c.queue_depth ?? 0} / peak ${c.queue_peak ?? 0}</td>
      <td class="num">${c.pauses_sent || c.pauses_received ? `PFC ${c.pauses_sent ?? 0}↑ ${c.pauses_received ?? 0}↓` : ""}${c.paused ? " paused" : ""}</td></tr>`).join("");
    return `<b>${esc(sw)} port ${esc(port)}</b> → ${esc(p.peer)}
      <div>tx ${mbps(p.tx?.bps)} · rx ${mbps(p.rx?.bps)}</div>
      <div>queue peak <b>${q.peak}</b> packets${q.marks ? ` · ${q.marks} ECN marks` : ""}${q.drops ? ` · ${q.drops} tail drops` : ""}</div>
      ${classes ? `<table>${classes}</table>` : ""}`;
  }
  if (kind === "switch") {
    const s = state.status?.switches?.find((x) => x.name === id) ?? {};
    const d = snap?.switches?.[id];
    const drops = Object.values(d?.drops ?? {}).reduce((a, x) => a + (x.interval ?? 0), 0);
    return `<b>${esc(id)}</b> ${esc(s.role?.toUpperCase() ?? "")}<br>${s.alive === false ? "<span class='bad'>process down</span>" : "alive"}${s.ready ? " · primary session" : ""}
      <br>${drops} drops this second<br><span class="muted">click for its tables and counters</span>`;
  }
  if (kind === "host") {
    const h = state.status?.hosts?.find((x) => x.name === id);
    return `<b>${esc(id)}</b><br>${(h?.nics ?? []).map((n) => `${esc(n.intf)} <code>${esc(n.ip)}</code>`).join("<br>")}`;
  }
  return "";
}

// --- the collective ------------------------------------------------------------------------

function onJob(d, at) {
  let job = state.job;
  if (!job || job.id !== d.id) {
    job = state.job = { id: d.id, phase: "start", start: {}, step: 0, steps: 0, samples: [], startAt: at };
  }
  if (d.phase === "start") {
    job.start = d;
    job.startAt = at;
    view.setJobHosts(d.hosts);
    logEvent("job", d, at);
  } else if (d.phase === "running") {
    job.phase = "running";
    job.elapsed = d.elapsed;
    job.steps = d.steps || job.steps;
    if (d.step != null) {
      const last = job.samples[job.samples.length - 1];
      if (!last || d.step > last[1]) job.samples.push([at, d.step]);
      job.step = d.step;
    }
  } else if (d.phase === "done" || d.phase === "failed") {
    job.phase = d.phase;
    job.done = d;
    job.error = d.error;
    job.endAt = at;
    job.elapsed = at - job.startAt;
    view.setJobHosts([]);
    logEvent("job", d, at);
    api("/jobs").then((jobs) => { state.jobs = jobs; renderJob(); }).catch(() => {});
  }
  renderJob();
}

function renderJob() {
  $("#job").innerHTML = jobHtml(state.job);
  $("#jobs").innerHTML = jobsHtml(state.jobs);
}

// A finished collective as GET /jobs/ID gives it, in the shape its events build.
function jobFromResult(r) {
  if (!r) return null;
  const req = r.request ?? {};
  return { id: r.id, phase: "done", steps: 0, elapsed: r.wall_seconds,
           start: { pattern: r.pattern, ranks: r.ranks_nics?.length, size: req.size, qps: req.qps,
                    strategy: req.strategy },
           done: { time_s: r.result?.time_s, busbw_gbps: r.result?.busbw_gbps, tiers: r.tiers,
                   cpu_bound: r.cpu_bound, step_seconds: r.step_seconds } };
}

$("#jobs").addEventListener("click", async (ev) => {
  const row = ev.target.closest("tr[data-job]");
  if (!row || (state.job && ["start", "running"].includes(state.job.phase))) return;
  try {
    state.job = jobFromResult(await api(`/jobs/${row.dataset.job}`));
    renderJob();
  } catch (err) {
    toast(esc(err.message), "bad");
  }
});

// --- events list and toasts --------------------------------------------------------------

function logEvent(kind, data, at) {
  const line = eventLine(kind, data);
  if (!line) return;
  const [tag, html, level] = line;
  const li = document.createElement("li");
  li.className = level;
  li.innerHTML = `<time>${clock(at)}</time><span class="kind">${esc(tag)}</span><span class="text">${html}</span>`;
  const list = $("#events");
  list.prepend(li);
  while (list.children.length > 40) list.lastChild.remove();
  $("#events-card .empty")?.remove();
  if (["link", "switch"].includes(kind) && data.cause !== "admin") toast(html, level);
}

function toast(html, level = "info") {
  const t = document.createElement("div");
  t.className = `toast ${level}`;
  t.innerHTML = html;
  $("#toasts").appendChild(t);
  while ($("#toasts").children.length > 3) $("#toasts").firstChild.remove();
  setTimeout(() => t.classList.add("gone"), 4500);
  setTimeout(() => t.remove(), 5200);
}

window.addEventListener("resize", () => view.fit());

// --- start ---------------------------------------------------------------------------------

$("#legend-scale").style.background = utilGradient();
connect();
load();
