// The fabric as SVG: nodes by tier, links in two halves coloured by load, ports with their queues.
//
// `FabricView(svg, {onSelect, onHover})`:
//   draw(topology, rates)  builds the drawing from GET /api/v1/topology (layout.js places it)
//   applyStats(snapshot)   colours from one statistics snapshot (the SSE "stats" event)
//   setLink(id, up)        a link event: failed style at once, "restoring" until probes agree
//   setSwitch(name, alive) a switch process died / came back
//   setJobHosts(hosts)     outline the hosts of the running collective
//   select(kind, id)       outline what the side panel shows
//
// Each link is drawn as two halves meeting in the middle (as network weather
// maps do): the half at an end is the traffic leaving that end, so both
// directions of a full-duplex link show at once. Every element carries its
// id in `data-id` (links: the link id, `<a_intf>--<b_intf>`), its state in
// `data-state` and, for links, each direction's utilisation in
// `data-util-ab` / `data-util-ba`: what the browser test reads.

import { GEOMETRY, layout } from "./layout.js";
import { IDLE, queueColor, utilColor } from "./format.js";

const NS = "http://www.w3.org/2000/svg";
const RESTORE_GRACE_S = 8;  // a restored link waits this long for the probes to cross it
const MAX_ZOOM = 1.45;
// The smallest zoom at which every label is still at least 9 px high (hosts' are 10.5 units):
// a fabric that would need less (16 racks side by side) is drawn at this zoom and scrolls.
const MIN_ZOOM = 0.86;
const QUEUED_FROM = 2;  // packets: one packet waiting is a packet in transit, not a queue

function el(name, attrs = {}, parent = null) {
  const node = document.createElementNS(NS, name);
  for (const [k, v] of Object.entries(attrs)) node.setAttribute(k, v);
  if (parent) parent.appendChild(node);
  return node;
}

const TIER_LABELS = {
  atsw: ["ATSW", "aggregator"],
  ctsw: ["CTSW", "cluster spine"],
  rtsw: ["RTSW", "rack leaf"],
  host: ["hosts", "GPU NICs"],
};
const LINK_TIER_BETWEEN = { host: ["rtsw", "host"], rtsw_ctsw: ["ctsw", "rtsw"],
                            ctsw_atsw: ["atsw", "ctsw"] };

export class FabricView {
  constructor(svg, { onSelect = () => {}, onHover = () => {} } = {}) {
    this.svg = svg;
    this.onSelect = onSelect;
    this.onHover = onHover;
    this.geo = null;
    this.edgeEls = new Map();
    this.nodeEls = new Map();
    this.portEls = new Map();   // "switch/port" -> element
    this.linkState = new Map(); // id -> {state, since}
    this.pauses = new Map();    // "switch/port" -> cumulative PAUSE frames, last snapshot
    this.selected = null;
    this.jobHosts = null;
    svg.addEventListener("click", (ev) => {
      if (ev.target === svg || ev.target.classList.contains("backdrop")) this.onSelect(null, null);
    });
  }

  draw(topology, rates = {}) {
    const svg = this.svg;
    svg.replaceChildren();
    this.edgeEls.clear(); this.nodeEls.clear(); this.portEls.clear();
    this.linkState.clear(); this.pauses.clear();
    const box = this.frame();
    const geo = layout(topology, { aspect: box.width && box.height ? box.width / box.height : null });
    this.geo = geo;
    this.fit();
    el("rect", { class: "backdrop", x: 0, y: 0, width: geo.width, height: geo.height }, svg);

    const zoneLayer = el("g", { class: "zones" }, svg);
    const firstRow = geo.rows.find((r) => r.tier !== "atsw") ?? geo.rows[0];
    const lastRow = geo.rows[geo.rows.length - 1];
    for (const z of geo.zones) {
      const top = firstRow.y - GEOMETRY.switchH / 2 - 22;
      const bottom = lastRow.y + GEOMETRY.hostH / 2 + 12;
      el("rect", { class: "zone", x: z.x0, y: top, width: z.x1 - z.x0, height: bottom - top,
                   rx: 12 }, zoneLayer);
      const label = el("text", { class: "zone-label", x: z.x0 + 10, y: top + 14 }, zoneLayer);
      label.textContent = `AI zone ${z.zone}`;
    }

    const labels = el("g", { class: "tier-labels" }, svg);
    const count = (t) => [...geo.nodes.values()].filter((n) => n.tier === t).length;
    for (const r of geo.rows) {
      const [name, what] = TIER_LABELS[r.tier];
      const t = el("text", { class: "tier-label", x: GEOMETRY.margin, y: r.y - 2 }, labels);
      t.textContent = name;
      const s = el("text", { class: "tier-sub", x: GEOMETRY.margin, y: r.y + 12 }, labels);
      s.textContent = `${count(r.tier)} · ${what}`;
    }
    const rowY = Object.fromEntries(geo.rows.map((r) => [r.tier, r.y]));
    for (const [tier, [upper, lower]] of Object.entries(LINK_TIER_BETWEEN)) {
      if (rowY[upper] == null || rowY[lower] == null) continue;
      const rate = rates[tier];
      if (!rate) continue;
      const t = el("text", { class: "rate-label", x: GEOMETRY.margin,
                             y: (rowY[upper] + rowY[lower]) / 2 + 4 }, labels);
      t.textContent = `${rate.rate_mbps} Mb/s${rate.scale ? ` ≙ ${fmtGbps(rate.rate_mbps * rate.scale)}` : ""}`;
    }

    const edgeLayer = el("g", { class: "edges" }, svg);
    for (const e of geo.edges.values()) {
      const g = el("g", { class: `edge tier-${e.tier}`, "data-id": e.id, "data-a": e.a,
                          "data-b": e.b, "data-tier": e.tier, "data-state": "up",
                          "data-util-ab": "0", "data-util-ba": "0" }, edgeLayer);
      const mx = (e.ax + e.bx) / 2, my = (e.ay + e.by) / 2;
      el("line", { class: "half ab", x1: e.ax, y1: e.ay, x2: mx, y2: my }, g);
      el("line", { class: "half ba", x1: mx, y1: my, x2: e.bx, y2: e.by }, g);
      el("line", { class: "hit", x1: e.ax, y1: e.ay, x2: e.bx, y2: e.by }, g);
      const cut = el("g", { class: "cut", transform: `translate(${mx} ${my})` }, g);
      el("circle", { r: 7 }, cut);
      el("path", { d: "M-3,-3L3,3M3,-3L-3,3" }, cut);
      g.addEventListener("click", (ev) => { ev.stopPropagation(); this.onSelect("link", e.id); });
      g.addEventListener("mousemove", (ev) => this.onHover("link", e.id, ev));
      g.addEventListener("mouseleave", () => this.onHover(null));
      this.edgeEls.set(e.id, g);
      this.linkState.set(e.id, { state: e.up === false ? "failed" : "up", since: 0 });
      this._paintLink(e.id);
    }

    const nodeLayer = el("g", { class: "nodes" }, svg);
    for (const n of geo.nodes.values()) {
      const g = el("g", { class: `node role-${n.tier}`, "data-id": n.id, "data-role": n.tier,
                          "data-state": "up", transform: `translate(${n.x} ${n.y})` }, nodeLayer);
      el("rect", { class: "box", x: -n.w / 2, y: -n.h / 2, width: n.w, height: n.h,
                   rx: n.tier === "host" ? 5 : 7 }, g);
      const label = el("text", { class: "label", y: 4 }, g);
      label.textContent = n.id;
      const ports = el("g", { class: "ports" }, g);
      for (const p of n.ports) {
        const s = GEOMETRY.portSize;
        const pg = el("g", { class: n.tier === "host" ? "nic" : "port", "data-port": p.port,
                             "data-edge": p.edge, transform: `translate(${p.x - n.x} ${p.y - n.y})` },
                      ports);
        if (n.tier === "host") {
          el("circle", { r: 2.6 }, pg);
          continue;
        }
        el("circle", { class: "pfc-ring", r: s * 0.78 }, pg);
        el("rect", { class: "well", x: -s / 2, y: -s / 2, width: s, height: s, rx: 1.5 }, pg);
        this.portEls.set(`${n.id}/${p.port}`, pg);
        pg.addEventListener("mousemove", (ev) => {
          ev.stopPropagation();
          this.onHover("port", `${n.id}/${p.port}`, ev);
        });
      }
      const kind = n.tier === "host" ? "host" : "switch";
      g.addEventListener("click", (ev) => { ev.stopPropagation(); this.onSelect(kind, n.id); });
      g.addEventListener("mousemove", (ev) => this.onHover(kind, n.id, ev));
      g.addEventListener("mouseleave", () => this.onHover(null));
      this.nodeEls.set(n.id, g);
    }
    if (this.selected) this.select(...this.selected);
    if (this.jobHosts) this.setJobHosts(this.jobHosts);
  }

  // The room the drawing has: the scrolling frame around the SVG (the SVG itself grows past
  // it when the fabric does not fit at MIN_ZOOM).
  frame() {
    return (this.svg.parentElement ?? this.svg).getBoundingClientRect();
  }

  // The whole fabric in view, centred, never blown up beyond MAX_ZOOM (a small fabric in a big
  // window stays at a readable size instead of filling it with huge labels) nor shrunk below
  // MIN_ZOOM (a fabric too wide for the window keeps readable labels and scrolls).
  fit() {
    const geo = this.geo;
    if (!geo) return;
    const box = this.frame();
    let w = geo.width, h = geo.height;
    let width = "", height = "";
    if (box.width && box.height) {
      const zoom = Math.max(MIN_ZOOM, Math.min(box.width / w, box.height / h, MAX_ZOOM));
      const pxW = Math.max(box.width, w * zoom), pxH = Math.max(box.height, h * zoom);
      if (pxW > box.width) width = `${Math.ceil(pxW)}px`;
      if (pxH > box.height) height = `${Math.ceil(pxH)}px`;
      w = pxW / zoom;
      h = pxH / zoom;
    }
    this.svg.style.width = width;
    this.svg.style.height = height;
    const x = (geo.width - w) / 2, y = (geo.height - h) / 2;
    this.svg.setAttribute("viewBox", `${x} ${y} ${w} ${h}`);
    const backdrop = this.svg.querySelector(".backdrop");
    if (backdrop) {
      for (const [k, v] of Object.entries({ x, y, width: w, height: h })) backdrop.setAttribute(k, v);
    }
  }

  applyStats(snap) {
    const now = Date.now() / 1000;
    for (const l of snap.links ?? []) {
      const g = this.edgeEls.get(l.id);
      if (!g) continue;
      g.dataset.utilAb = String(l.a_to_b?.util ?? 0);
      g.dataset.utilBa = String(l.b_to_a?.util ?? 0);
      const st = this.linkState.get(l.id);
      if (l.up) {
        st.state = "up";
      } else if (!(st.state === "restoring" && now - st.since < RESTORE_GRACE_S)) {
        st.state = "failed";
      }
      this._paintLink(l.id);
    }
    for (const [sw, data] of Object.entries(snap.switches ?? {})) {
      for (const [port, p] of Object.entries(data.ports ?? {})) {
        const pg = this.portEls.get(`${sw}/${port}`);
        if (!pg) continue;
        const q = portQueue(p);
        const key = `${sw}/${port}`;
        const before = this.pauses.get(key);
        this.pauses.set(key, q.pauses);
        const pausing = q.paused || (before != null && q.pauses > before);
        const ratio = Math.min(1, q.peak / (this._queueOf(sw, port) || 64));
        const well = pg.querySelector(".well");
        well.style.fill = q.peak >= QUEUED_FROM ? queueColor(ratio) : "";
        pg.dataset.queue = String(q.peak);
        pg.classList.toggle("queued", q.peak >= QUEUED_FROM);
        pg.classList.toggle("pfc", pausing);
      }
    }
  }

  _queueOf(sw, port) {
    const n = this.geo?.nodes.get(sw);
    const p = n?.ports.find((x) => String(x.port) === String(port));
    return p ? this.geo.edges.get(p.edge)?.queue : undefined;
  }

  setLink(id, up) {
    const st = this.linkState.get(id);
    if (!st) return;
    st.state = up ? "restoring" : "failed";
    st.since = Date.now() / 1000;
    this._paintLink(id);
  }

  linkStateOf(id) {
    return this.linkState.get(id)?.state;
  }

  _paintLink(id) {
    const g = this.edgeEls.get(id);
    const st = this.linkState.get(id);
    g.dataset.state = st.state;
    g.classList.toggle("failed", st.state === "failed");
    g.classList.toggle("restoring", st.state === "restoring");
    const live = st.state === "up";
    const ab = Number(g.dataset.utilAb), ba = Number(g.dataset.utilBa);
    g.querySelector(".ab").style.stroke = live ? utilColor(ab) : "";
    g.querySelector(".ba").style.stroke = live ? utilColor(ba) : "";
    g.classList.toggle("hot", live && Math.max(ab, ba) >= 0.75);
    g.classList.toggle("busy", live && (utilColor(ab) !== IDLE || utilColor(ba) !== IDLE));
  }

  setSwitch(name, alive) {
    const g = this.nodeEls.get(name);
    if (!g) return;
    g.dataset.state = alive ? "up" : "dead";
    g.classList.toggle("dead", !alive);
  }

  setJobHosts(hosts) {
    this.jobHosts = hosts ?? [];
    const set = new Set(this.jobHosts);
    for (const [id, g] of this.nodeEls) g.classList.toggle("in-job", set.has(id));
  }

  select(kind, id) {
    this.selected = kind ? [kind, id] : null;
    for (const g of this.svg.querySelectorAll(".selected")) g.classList.remove("selected");
    this.svg.classList.toggle("has-selection", !!kind);
    if (!kind) return;
    const g = kind === "link" ? this.edgeEls.get(id) : this.nodeEls.get(id);
    g?.classList.add("selected");
    if (kind !== "link") {
      for (const [eid, eg] of this.edgeEls) {
        const e = this.geo.edges.get(eid);
        eg.classList.toggle("selected-end", e.a === id || e.b === id);
      }
    } else {
      for (const eg of this.edgeEls.values()) eg.classList.remove("selected-end");
    }
  }
}

// A switch port's queues from the snapshot: the deepest class, PAUSE frames so far, paused now.
// `peak` is the interval's peak (the register is cleared after each read); the depth register
// keeps the depth the last packet saw, so after a burst it stays up on an idle port: it is
// shown in the tooltip, not drawn.
export function portQueue(p) {
  let depth = 0, peak = 0, pauses = 0, paused = false, marks = 0, drops = 0;
  for (const c of Object.values(p.classes ?? {})) {
    depth = Math.max(depth, c.queue_depth ?? 0);
    peak = Math.max(peak, c.queue_peak ?? c.queue_depth ?? 0);  // no peak register: the depth
    pauses += (c.pauses_sent ?? 0) + (c.pauses_received ?? 0);
    paused = paused || !!c.paused;
    marks += c.ecn_marks ?? 0;
    drops += c.tm_dropped ?? 0;
  }
  return { depth, peak, pauses, paused, marks, drops };
}

function fmtGbps(mbps) {
  const g = mbps / 1000;
  return g >= 1 ? `${g.toFixed(0)}G` : `${mbps.toFixed(0)}M`;
}
