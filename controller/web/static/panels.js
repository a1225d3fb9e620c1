// The side panels as HTML: what is selected, live uplink imbalance, the collective, events.
//
// Each function takes the dashboard's state (and what it renders) and
// returns an HTML string or fills an element; none talks to the API.
//   switchPanel, linkPanel, hostPanel   the selection card
//   routesHtml, countersHtml            a switch's tables and counters, read on request
//   tiersHtml                           per-tier imbalance (max/mean) of the snapshot
//   jobHtml, jobsHtml                   the running / last collective, the recent ones
//   eventLine                           one line of the events list

import { portQueue } from "./graph.js";
import { bytes, clock, esc, mbps, pct, pps, seconds, standsFor, utilColor } from "./format.js";

const ROLE_NAMES = { rtsw: "RTSW", ctsw: "CTSW", atsw: "ATSW", host: "host" };
const TIER_NAMES = {
  "host up": "hosts → RTSW", "rtsw up": "RTSW → CTSW", "ctsw up": "CTSW → ATSW",
  "rtsw down": "CTSW → RTSW", "ctsw down": "ATSW → CTSW",
};

export function tierName(label) {
  return TIER_NAMES[label] ?? label;
}

function bar(fraction, color, title = "") {
  const w = Math.max(0, Math.min(1, fraction ?? 0)) * 100;
  return `<span class="bar" title="${esc(title)}"><span style="width:${w.toFixed(1)}%;background:${color}"></span></span>`;
}

function imbalanceColor(x) {
  if (x == null) return "var(--muted)";
  if (x < 1.15) return "var(--good)";
  if (x < 1.5) return "var(--warn)";
  return "var(--bad)";
}

// Live imbalance per tier: 1.00 is a perfect spread; the bar runs from 1 to 3.
export function tiersHtml(stats, rates) {
  const tiers = Object.entries(stats?.tiers ?? {}).sort();
  if (!tiers.length) return `<p class="muted">waiting for statistics…</p>`;
  const rows = tiers.map(([label, t]) => {
    const tier = { "host up": "host", "rtsw up": "rtsw_ctsw", "ctsw up": "ctsw_atsw" }[label];
    const rate = rates?.[tier]?.rate_mbps;
    const util = rate ? t.mean_bps / (rate * 1e6) : null;
    const imb = t.imbalance;
    const busy = util != null && util >= 0.002;
    return `<div class="tier-row" data-tier="${esc(label)}">
      <div class="tier-name">${esc(tierName(label))} <small>${t.links} links</small></div>
      <div class="tier-imb" style="color:${busy ? imbalanceColor(imb) : "var(--muted)"}">
        ${busy && imb != null ? imb.toFixed(2) : "idle"}</div>
      ${bar(busy && imb != null ? (imb - 1) / 2 : 0, busy ? imbalanceColor(imb) : "var(--muted)", "max / mean")}
      <div class="tier-figs">mean ${mbps(t.mean_bps)} <span class="muted">(${pct(util)})</span> · max ${mbps(t.max_bps)}</div>
    </div>`;
  });
  return rows.join("");
}

export function switchPanel(name, ctx) {
  const { topology, status, stats, rates } = ctx;
  const node = topology.nodes.find((n) => n.id === name);
  const st = status?.switches?.find((s) => s.name === name) ?? {};
  const snap = stats?.switches?.[name];
  const edges = topology.edges.filter((e) => e.a === name || e.b === name);
  const portRows = edges.map((e) => {
    const mine = e.a === name ? e.a_port : e.b_port;
    const peer = e.a === name ? e.b : e.a;
    const peerPort = e.a === name ? e.b_port : e.a_port;
    const p = snap?.ports?.[String(mine)];
    const q = p ? portQueue(p) : null;
    const scale = rates?.[e.tier]?.scale;
    const cap = e.queue ?? 64;
    const util = p && e.rate_mbps ? p.tx.bps / (e.rate_mbps * 1e6) : null;
    return `<tr class="${e.up === false ? "down" : ""}" data-port="${mine}">
      <td class="num">${mine}</td><td>${esc(peer)}<span class="muted">:${peerPort}</span></td>
      <td class="num" title="${esc(standsFor(p?.tx?.bps, scale))}">
        <span class="swatch" style="background:${utilColor(util)}"></span>${mbps(p?.tx?.bps)}</td>
      <td class="num">${mbps(p?.rx?.bps)}</td>
      <td class="num">${q ? `${bar(q.peak / cap, "var(--queue)", `${q.peak} of ${cap} packets`)} ${q.peak}` : "–"}</td>
      <td class="num">${q?.pauses ? `<span class="pfc-tag">${q.pauses}</span>` : "–"}</td>
      <td class="num">${q?.marks || "–"}</td>
    </tr>`;
  }).join("");
  const drops = Object.entries(snap?.drops ?? {});
  const last = st.last_reconcile;
  return `
    <div class="sel-head">
      <h2>${esc(name)} <span class="tag role-${esc(node?.role)}">${ROLE_NAMES[node?.role] ?? ""}</span></h2>
      <span class="state ${st.alive === false ? "bad" : "good"}">${st.alive === false ? "process down" : "alive"}${st.ready ? " · primary" : ""}</span>
    </div>
    <p class="sub">zone ${esc(node?.zone ?? "–")}${onServer(st.server)} · device ${esc(st.device_id ?? "–")} · P4Runtime ${esc(st.grpc_addr ?? "–")}
      ${last ? `<br>last reconcile: ${esc(last.reason)}, ${seconds(last.seconds)}, ${countsText(last.counts)}` : ""}</p>
    <h3>Ports <small>live, this second</small></h3>
    <table class="grid ports-table"><thead><tr><th>port</th><th>peer</th><th>tx</th><th>rx</th>
      <th title="deepest queue of the port this interval (peak, packets)">queue</th><th title="PFC PAUSE frames sent + received so far">PFC</th><th title="ECN marks this interval">ECN</th></tr></thead>
      <tbody>${portRows}</tbody></table>
    ${drops.length ? `<h3>Drops <small>interval / total</small></h3><p>${drops.map(([r, d]) =>
      `<span class="chip bad">${esc(r)} ${d.interval} / ${d.total}</span>`).join(" ")}</p>` : ""}
    <h3>Tables <small>read over P4Runtime</small> <button class="mini" data-action="read-routes">read again</button></h3>
    <div id="sel-routes" class="muted">reading…</div>
    <h3>Counters <small>read now</small> <button class="mini" data-action="read-counters">read again</button></h3>
    <div id="sel-counters" class="muted">reading…</div>`;
}

/* A fabric over several servers: where a node runs ("" on one machine). */
function onServer(server) {
  return server ? ` · <span class="server">on ${esc(server)}</span>` : "";
}

/* A link whose ends run on two servers is carried between them by a VXLAN tunnel. */
function crossing(e, status) {
  const where = (n) => (status?.switches?.find((s) => s.name === n)
    ?? status?.hosts?.find((h) => h.name === n))?.server;
  const [a, b] = [where(e.a), where(e.b)];
  return a && b && a !== b
    ? `<br><span class="server crossing">crosses servers: ${esc(a)} ↔ ${esc(b)} (VXLAN tunnel)</span>` : "";
}

function countsText(counts) {
  if (!counts) return "";
  return Object.entries(counts).filter(([, v]) => v).map(([k, v]) => `${v} ${k}`).join(", ") || "no writes";
}

// GET /routes?switch=S answers {mode, failed, switches: {S: {entries, matches_intent, diff}}}.
export function routesHtml(name, data) {
  const sw = data.switches?.[name];
  if (!sw) return `<p class="muted">no entries</p>`;
  const groups = new Map();
  for (const line of sw.entries) {
    const table = line.split(" ", 1)[0];
    if (!groups.has(table)) groups.set(table, []);
    groups.get(table).push(line.slice(table.length + 1));
  }
  const badge = sw.matches_intent
    ? `<span class="chip good">equal to the intent (${esc(data.mode)})</span>`
    : `<span class="chip bad">differs from the intent: ${esc(countsText(sw.diff))}</span>`;
  const items = [...groups].map(([table, lines]) => `
    <details><summary><code>${esc(table.replace(/^Fabric(Ingress|Egress)\./, ""))}</code>
      <b>${lines.length}</b></summary>
      <ul class="entries">${lines.map((l) => `<li><code>${esc(l)}</code></li>`).join("")}</ul></details>`);
  return `<p>${badge} <span class="muted">${sw.entries.length} entities</span></p>${items.join("")}`;
}

// Counters read now: {rx, tx: GET /counters/S/<port counter> answers, drops: the drop counter}.
export function countersHtml(read) {
  const ports = [...new Set([...Object.keys(read.rx?.cells ?? {}), ...Object.keys(read.tx?.cells ?? {})])]
    .sort((p, q) => p - q);
  const rows = ports.map((p) => {
    const rx = read.rx?.cells?.[p], tx = read.tx?.cells?.[p];
    return `<tr><td class="num">${p}</td><td class="num">${rx?.packets ?? "–"}</td><td class="num">${bytes(rx?.bytes)}</td>
      <td class="num">${tx?.packets ?? "–"}</td><td class="num">${bytes(tx?.bytes)}</td></tr>`;
  }).join("");
  const drops = Object.entries(read.drops?.cells ?? {}).filter(([, c]) => c.packets);
  return `<table class="grid"><thead><tr><th>port</th><th>rx packets</th><th>rx bytes</th>
    <th>tx packets</th><th>tx bytes</th></tr></thead><tbody>${rows}</tbody></table>
    <p class="muted small"><code>${esc(read.rx?.counter ?? "")}</code>, <code>${esc(read.tx?.counter ?? "")}</code>
    ${drops.length ? `<br>drops: ${drops.map(([i, c]) => `${esc(read.reasons?.[i] ?? i)} ${c.packets}`).join(", ")}` : " · no drops"}</p>`;
}

export function linkPanel(id, ctx) {
  const { topology, stats, rates, linkState } = ctx;
  const e = topology.edges.find((x) => x.id === id);
  if (!e) return "";
  const live = stats?.links?.find((l) => l.id === id);
  const scale = rates?.[e.tier]?.scale;
  const state = linkState ?? (e.up === false ? "failed" : "up");
  const dir = (label, d) => `
    <div class="dir"><div class="dir-name">${label}</div>
      <div class="dir-fig" style="color:${utilColor(d?.util)}">${pct(d?.util)}</div>
      ${bar(d?.util, utilColor(d?.util))}
      <div class="muted small">${mbps(d?.bps)} · ${pps(d?.pps)}<br>${esc(standsFor(d?.bps, scale))}</div></div>`;
  const siblings = topology.edges.filter((x) => new Set([x.a, x.b]).size === 2
    && ((x.a === e.a && x.b === e.b) || (x.a === e.b && x.b === e.a)));
  const index = siblings.findIndex((x) => x.id === id);
  const failed = state === "failed";
  return `
    <div class="sel-head"><h2>${esc(e.a)}:${e.a_port} ↔ ${esc(e.b)}:${e.b_port}</h2>
      <span class="state ${failed ? "bad" : state === "restoring" ? "warn" : "good"}">${failed ? "failed" : state === "restoring" ? "restoring" : "up"}</span></div>
    <p class="sub"><code>${esc(id)}</code><br>${esc(e.tier)} tier · ${e.rate_mbps ?? "–"} Mb/s ${esc(standsFor((e.rate_mbps ?? 0) * 1e6, scale))}${crossing(e, ctx.status)}</p>
    <div class="dirs">${dir(`${esc(e.a)} → ${esc(e.b)}`, live?.a_to_b)}${dir(`${esc(e.b)} → ${esc(e.a)}`, live?.b_to_a)}</div>
    <div class="actions">
      <button class="action ${failed ? "restore" : "fail"}" data-action="set-link" data-up="${failed}"
        data-a="${esc(e.a)}" data-b="${esc(e.b)}" data-index="${index}">${failed ? "Restore link" : "Fail link"}</button>
      <span class="muted small">same as <code>aizone link ${failed ? "up" : "down"} ${esc(e.a)} ${esc(e.b)}${index ? ` --index ${index}` : ""}</code></span>
    </div>
    <div class="actions">${capture(e)}</div>`;
}

/* "Capture" links: the packets of the link, taken at a switch end (a host link's B end is
   its switch; a switch-to-switch link is taken at A), as a pcap download
   (GET /api/v1/capture, with the page's cookie). */
function capture(e) {
  const [sw, port] = e.tier === "host" ? [e.b, e.b_port] : [e.a, e.a_port];
  const target = `${sw}:${port}`;
  const link = (s) => `<a class="action capture" data-action="capture" data-seconds="${s}"
    href="api/v1/capture?target=${encodeURIComponent(target)}&seconds=${s}" download>Capture ${s} s</a>`;
  return `${link(5)}${link(30)}
    <span class="muted small">pcap of <code>${esc(target)}</code>, for Wireshark; same as <code>aizone capture ${esc(target)} -w FILE --seconds N</code></span>`;
}

export function hostPanel(name, ctx) {
  const { topology, status, stats, rates } = ctx;
  const h = status?.hosts?.find((x) => x.name === name);
  const node = topology.nodes.find((n) => n.id === name);
  const edges = topology.edges.filter((e) => e.a === name || e.b === name);
  const rows = edges.map((e) => {
    const l = stats?.links?.find((x) => x.id === e.id);
    const nic = h?.nics?.[e.a === name ? e.a_port : e.b_port];
    const scale = rates?.[e.tier]?.scale;
    return `<tr><td>${esc(nic?.intf ?? e.a_port)}</td><td><code>${esc(nic?.ip ?? "")}</code></td>
      <td>${esc(e.b)}:${e.b_port}</td>
      <td class="num" title="${esc(standsFor(l?.a_to_b?.bps, scale))}"><span class="swatch" style="background:${utilColor(l?.a_to_b?.util)}"></span>${mbps(l?.a_to_b?.bps)}</td>
      <td class="num"><span class="swatch" style="background:${utilColor(l?.b_to_a?.util)}"></span>${mbps(l?.b_to_a?.bps)}</td></tr>`;
  }).join("");
  return `<div class="sel-head"><h2>${esc(name)} <span class="tag role-host">host</span></h2></div>
    <p class="sub">zone ${esc(node?.zone)} · rack ${esc(node?.rack)} · under ${esc(node?.rtsw)}${onServer(h?.server)}</p>
    <table class="grid"><thead><tr><th>NIC</th><th>address</th><th>RTSW port</th><th>sends</th><th>receives</th></tr></thead>
    <tbody>${rows}</tbody></table>`;
}

// The collective: `job` is what the dashboard kept from the "job" events of one id.
export function jobHtml(job) {
  if (!job) return `<p class="muted">No collective has run on this fabric yet. Start one with
    <code>aizone run allreduce --ranks 8 --size 1M</code>.</p>`;
  const s = job.start ?? {};
  const total = job.steps || 0;
  const step = job.phase === "done" ? total : job.step ?? 0;
  const frac = total ? step / total : job.phase === "done" ? 1 : 0;
  const phaseText = { start: "starting", running: "running", done: "done", failed: "failed" }[job.phase] ?? job.phase;
  const head = `<div class="job-head"><b>#${job.id} ${esc(s.pattern ?? job.pattern ?? "")}</b>
      <span class="muted">${[s.ranks != null ? `${s.ranks} ranks` : "", s.size != null ? bytes(s.size) : "",
        s.qps != null ? `${s.qps} QP${s.qps === 1 ? "" : "s"} ${esc(s.strategy ?? "")}` : ""].filter(Boolean).join(" · ")}</span>
      <span class="state ${job.phase === "failed" ? "bad" : job.phase === "done" ? "good" : "warn"}" data-phase="${esc(job.phase)}">${phaseText}</span></div>
    <div class="progress"><span style="width:${(frac * 100).toFixed(1)}%"></span></div>
    <div class="muted small">${total ? `step ${Math.min(step + (job.phase === "done" ? 0 : 1), total)} of ${total} · ` : ""}${seconds(job.elapsed)} ${job.phase === "done" ? "wall time" : "elapsed"}</div>`;
  const steps = stepBars(job);
  let result = "";
  if (job.phase === "done") {
    const d = job.done;
    result = `<div class="figures">
        <div><span class="fig">${seconds(d.time_s)}</span><span class="muted">time</span></div>
        <div><span class="fig">${(d.busbw_gbps ?? 0).toFixed(3)}</span><span class="muted">busbw Gb/s</span></div>
        ${d.cpu_bound ? `<div><span class="fig warn">CPU</span><span class="muted">bound</span></div>` : ""}
      </div>
      <h3>Imbalance per tier <small>bytes each link carried in the job, max / mean</small></h3>
      ${Object.entries(d.tiers ?? {}).map(([label, t]) => `<div class="tier-row compact">
        <div class="tier-name">${esc(tierName(label))} <small>${t.links} links</small></div>
        <div class="tier-imb" style="color:${imbalanceColor(t.imbalance)}">${t.imbalance == null ? "–" : t.imbalance.toFixed(2)}</div>
        ${bar(t.imbalance == null ? 0 : (t.imbalance - 1) / 2, imbalanceColor(t.imbalance))}
        <div class="tier-figs">max ${bytes(t.max_bytes)} · min ${bytes(t.min_bytes)}</div></div>`).join("")}`;
  } else if (job.phase === "failed") {
    result = `<p class="bad">${esc(job.error)}</p>`;
  }
  return head + steps + result;
}

// Per-step times: the agents' own (`step_seconds` in the done event) when the daemon sends
// them; else estimated from the progress events (every 0.5 s, the slowest host's step): the
// time each step count was reached, interpolated between events.
function stepBars(job) {
  let times = job.done?.step_seconds;
  let note = "from the agents";
  if (!times) {
    times = estimateSteps(job.samples ?? [], job.phase === "done" ? [job.endAt, job.steps] : null);
    note = "≈ from progress events (0.5 s apart)";
  }
  if (!times.length) return "";
  const max = Math.max(...times, 1e-9);
  const w = 100 / times.length;
  const bars = times.map((t, i) => {
    const h = (t / max) * 100;
    return `<span class="step" style="left:${(i * w).toFixed(2)}%;width:calc(${w.toFixed(2)}% - 2px);height:${h.toFixed(1)}%" title="step ${i + 1}: ${seconds(t)}"></span>`;
  }).join("");
  return `<h3>Per-step time <small>${note}</small></h3>
    <div class="steps">${bars}</div>
    <div class="muted small steps-axis"><span>step 1</span><span>longest ${seconds(max)}</span><span>step ${times.length}</span></div>`;
}

// samples: [at, steps done] in time order; end: the job's [at, total] once done.
export function estimateSteps(samples, end) {
  const pts = end && end[0] != null && end[1] ? [...samples, end] : [...samples];
  if (pts.length < 2) return [];
  const reach = [];  // reach[k]: when k steps were done
  for (let i = 1; i < pts.length; i++) {
    const [t0, s0] = pts[i - 1], [t1, s1] = pts[i];
    for (let k = Math.max(s0, 0) + (i === 1 ? 0 : 1); k <= s1; k++) {
      if (s1 === s0) continue;
      reach[k] = t0 + ((k - s0) / (s1 - s0)) * (t1 - t0);
    }
  }
  const times = [];
  for (let k = 0; k + 1 < reach.length; k++) {
    if (reach[k] != null && reach[k + 1] != null) times.push(reach[k + 1] - reach[k]);
  }
  return times;
}

export function jobsHtml(jobs) {
  if (!jobs?.length) return "";
  const rows = [...jobs].sort((p, q) => q.id - p.id).slice(0, 8).map((j) => `
    <tr data-job="${j.id}" title="show this result"><td class="num">#${j.id}</td><td>${esc(j.pattern)}</td><td class="num">${j.ranks}</td>
      <td>${esc(j.mode ?? "")}</td><td class="num">${seconds(j.time_s)}</td><td class="num">${(j.busbw_gbps ?? 0).toFixed(3)}</td></tr>`);
  return `<h3>Last results</h3><table class="grid"><thead><tr><th></th><th>pattern</th><th>ranks</th>
    <th>mode</th><th>time</th><th>busbw Gb/s</th></tr></thead><tbody>${rows.join("")}</tbody></table>`;
}

// One line of the events list: [kind, text, level] for an SSE event, or null to leave it out.
export function eventLine(kind, data) {
  switch (kind) {
    case "mode":
      return ["mode", `routing ${data.previous} → <b>${esc(data.mode)}</b> in ${seconds(data.seconds)}`, "info"];
    case "link":
      if (data.cause === "silent") return ["link", `<code>${esc(data.link)}</code> failed silently (the probes must find it)`, "warn"];
      return ["link", `<code>${esc(data.link)}</code> ${data.up ? "restored" : "<b>down</b>"} (${esc(data.cause)}${data.detected_after != null ? `, seen after ${seconds(data.detected_after)}` : ""})`, data.up ? "good" : "bad"];
    case "rerouted":
      if (data.changed === false) return null;
      return ["routes", `rerouted ${data.up ? "onto" : "around"} <code>${esc(data.link)}</code> in ${seconds(data.reconverged_after)}${data.lost_packets != null ? `, ${data.lost_packets} packet(s) lost` : ""}`, "info"];
    case "switch":
      return ["switch", `${esc(data.switch)} ${esc(data.phase)}${data.total_seconds != null ? ` (${seconds(data.total_seconds)})` : ""}`, data.phase === "died" ? "bad" : "good"];
    case "reconciled":
      if (data.reason === "start") return null;
      return ["reconcile", `${esc(data.switch)}: ${esc(data.reason)} — ${esc(countsText(data.counts))}`, "info"];
    case "job":
      if (data.phase === "start") return ["job", `#${data.id} ${esc(data.pattern)} on ${data.ranks} ranks started`, "info"];
      if (data.phase === "done") return ["job", `#${data.id} done in ${seconds(data.time_s)}, busbw ${(data.busbw_gbps ?? 0).toFixed(3)} Gb/s`, "good"];
      if (data.phase === "failed") return ["job", `#${data.id} failed: ${esc(data.error)}`, "bad"];
      return null;
    case "clock":
      if (data.ok) return ["clock", `${esc(data.server)}: clock back within the bound (${(data.offset_s * 1e3).toFixed(1)} ms)`, "good"];
      return ["clock", esc(data.error), "bad"];
    case "failed":
      return ["fabric", `bring-up failed: ${esc(data.error)}`, "bad"];
    case "stopping":
      return ["fabric", "stopping (aizone down)", "warn"];
    default:
      return null;
  }
}

export { clock };
