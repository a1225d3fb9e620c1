// Where every node, port and link of a fabric is drawn: a pure function of the topology.
//
// `layout(topology)` takes what GET /api/v1/topology answers (nodes with a
// kind/role/zone/position, hosts with their rtsw and rack; edges with ids,
// ends a/b (the lower tier first), ports and tier) and returns the drawing's
// geometry in SVG units:
//
//   rows:  one per tier present, top to bottom ATSW, CTSW, RTSW, hosts
//   zones: one box per AI zone (x0..x1), racks side by side inside it
//   nodes: id -> {x, y (centre), w, h, ports: [{edge, port, x, y, side}]}
//   edges: id -> {a, b, ax, ay, bx, by} from a's port on a's top to b's port on b's bottom
//
// Racks are laid out left to right (zone, then RTSW position), each host
// under its RTSW; a tier's switches are spread evenly over their zone (ATSWs
// over the whole fabric). A node's ports sit on its top edge (links to the
// tier above) and bottom edge (links below), ordered by the far end's x, so
// parallel links (two NICs of a host) never cross and a rack's links fan out
// in order. Nothing depends on the browser, so the browser test can check the
// geometry of any preset.

export const GEOMETRY = Object.freeze({
  margin: 28,        // around the drawing
  gutter: 92,        // left column for the tier labels
  hostW: 44, hostH: 24,
  switchH: 30, minSwitchW: 62,
  portPitch: 11,     // distance between neighbouring ports on a node's edge
  portSize: 7,
  hostGap: 12, rackGap: 30, zoneGap: 56, zonePad: 14,
  rowGap: { atsw: 150, ctsw: 160, rtsw: 118 },  // from this row down to the next
});

export const TIERS = ["atsw", "ctsw", "rtsw", "host"];
const TIER_RANK = { atsw: 0, ctsw: 1, rtsw: 2, host: 3 };

const tierOf = (node) => (node.kind === "host" ? "host" : node.role);
const byPosition = (p, q) => (p.position ?? 0) - (q.position ?? 0) || cmpId(p.id, q.id);

// "h2" < "h10": compare names with their numbers as numbers.
export function cmpId(a, b) {
  return String(a).localeCompare(String(b), "en", { numeric: true });
}

export function layout(topology, { aspect = null } = {}) {
  const G = GEOMETRY;
  const nodes = new Map();
  for (const n of topology.nodes) {
    nodes.set(n.id, { ...n, tier: tierOf(n), x: 0, y: 0, w: 0, h: 0, ports: [] });
  }
  const edges = new Map();
  const links = { up: new Map(), down: new Map() };  // node id -> edges above / below it
  for (const n of nodes.keys()) { links.up.set(n, []); links.down.set(n, []); }
  for (const e of topology.edges) {
    const a = nodes.get(e.a), b = nodes.get(e.b);
    if (!a || !b) throw new Error(`edge ${e.id}: unknown end ${!a ? e.a : e.b}`);
    // `a` is the lower tier in every edge the API gives; order them anyway.
    const [lo, hi] = TIER_RANK[a.tier] >= TIER_RANK[b.tier] ? [a, b] : [b, a];
    const item = { ...e, lo: lo.id, hi: hi.id, loPort: lo === a ? e.a_port : e.b_port,
                   hiPort: lo === a ? e.b_port : e.a_port };
    edges.set(e.id, item);
    links.up.get(lo.id).push(item);
    links.down.get(hi.id).push(item);
  }

  // Widths: room for every port on the busier side.
  for (const n of nodes.values()) {
    const ports = Math.max(links.up.get(n.id).length, links.down.get(n.id).length);
    if (n.tier === "host") {
      n.w = Math.max(G.hostW, ports * G.portPitch + 14);
      n.h = G.hostH;
    } else {
      n.w = Math.max(G.minSwitchW, ports * G.portPitch + 16);
      n.h = G.switchH;
    }
  }

  const of = (tier) => [...nodes.values()].filter((n) => n.tier === tier);
  const zoneIds = [...new Set([...nodes.values()].filter((n) => n.tier !== "atsw")
    .map((n) => n.zone ?? 0))].sort((p, q) => p - q);

  // Racks left to right (x), then rows top to bottom (y).
  const zones = placeRacks(nodes, of, zoneIds);
  const right = zones.length ? zones[zones.length - 1].x1 - G.zonePad : G.margin + G.gutter;
  const width = right + G.margin;
  const present = TIERS.filter((t) => of(t).length > 0);
  const top = G.margin + 26 + G.switchH / 2;  // room above for the zone labels
  const gaps = present.slice(0, -1).map((t) => G.rowGap[t] ?? 0);
  const natural = top + gaps.reduce((s, g) => s + g, 0) + G.hostH / 2 + G.margin + 6;
  // A wide fabric in a less wide window: the meshes between switch tiers get taller (up to
  // twice), so that their crossing links spread out; the host tier keeps its height.
  const mesh = present.slice(0, -1).reduce((s, t, i) => s + (t === "rtsw" ? 0 : gaps[i]), 0);
  const want = aspect ? width / aspect - natural : 0;
  const stretch = mesh ? Math.min(2, Math.max(1, 1 + want / mesh)) : 1;
  const rows = [];
  const rowY = {};
  let y = top;
  present.forEach((t, i) => {
    rows.push({ tier: t, y });
    rowY[t] = y;
    y += (gaps[i] ?? 0) * (t === "rtsw" ? 1 : stretch);
  });
  const height = rows[rows.length - 1].y + G.hostH / 2 + G.margin + 6;
  for (const n of nodes.values()) n.y = rowY[n.tier];
  spread(of("atsw").sort(byPosition), G.margin + G.gutter, right);

  // Ports: on the top edge the links up, on the bottom edge the links down.
  for (const n of nodes.values()) {
    for (const side of ["up", "down"]) {
      const list = links[side].get(n.id);
      const far = (e) => nodes.get(side === "up" ? e.hi : e.lo);
      const own = (e) => (side === "up" ? e.loPort : e.hiPort);
      list.sort((p, q) => far(p).x - far(q).x || (own(p) ?? 0) - (own(q) ?? 0) || cmpId(p.id, q.id));
      const pitch = list.length > 1 ? Math.min(G.portPitch, (n.w - 12) / (list.length - 1)) : 0;
      list.forEach((e, i) => {
        const px = n.x + (i - (list.length - 1) / 2) * pitch;
        const py = side === "up" ? n.y - n.h / 2 : n.y + n.h / 2;
        n.ports.push({ edge: e.id, port: own(e), x: px, y: py, side });
        if (side === "up") { e.ax = px; e.ay = py; } else { e.bx = px; e.by = py; }
      });
    }
  }
  for (const e of edges.values()) {
    // The drawing's a/b are the API's a/b (lower tier first): keep them, with their anchors.
    if (e.lo !== e.a) {
      [e.ax, e.bx] = [e.bx, e.ax];
      [e.ay, e.by] = [e.by, e.ay];
    }
  }
  return { width, height, rows, zones, nodes, edges };
}

// x of every rack, host and CTSW, zone by zone; returns the zones' boxes.
function placeRacks(nodes, of, zoneIds) {
  const G = GEOMETRY;
  const zones = [];
  let cursor = G.margin + G.gutter;
  for (const z of zoneIds) {
    const x0 = cursor;
    const racks = of("rtsw").filter((n) => (n.zone ?? 0) === z).sort(byPosition);
    for (const r of racks) {
      const hosts = of("host").filter((h) => h.rtsw === r.id).sort(byPosition);
      const hostsW = hosts.reduce((s, h) => s + h.w, 0) + Math.max(0, hosts.length - 1) * G.hostGap;
      const rackW = Math.max(r.w, hostsW);
      r.x = cursor + rackW / 2;
      let hx = r.x - hostsW / 2;
      for (const h of hosts) {
        h.x = hx + h.w / 2;
        hx += h.w + G.hostGap;
      }
      cursor += rackW + G.rackGap;
    }
    // Hosts without a rack switch in this zone (none in the presets) go after the racks.
    for (const h of of("host").filter((h) => (h.zone ?? 0) === z && !nodes.has(h.rtsw))) {
      h.x = cursor + h.w / 2;
      cursor += h.w + G.hostGap;
    }
    let x1 = Math.max(x0, cursor - G.rackGap);
    // CTSWs of the zone spread evenly over it (wider than the racks: the zone grows).
    const spines = of("ctsw").filter((n) => (n.zone ?? 0) === z).sort(byPosition);
    const need = spines.reduce((s, n) => s + n.w + 24, 0);
    if (need > x1 - x0) {
      const grow = need - (x1 - x0);
      for (const n of [...nodes.values()]) {
        if (n.tier !== "ctsw" && n.tier !== "atsw" && (n.zone ?? 0) === z && n.x >= x0) {
          n.x += grow / 2;
        }
      }
      x1 += grow;
    }
    spread(spines, x0, x1);
    zones.push({ zone: z, x0: x0 - G.zonePad, x1: x1 + G.zonePad });
    cursor = x1 + G.zoneGap;
  }
  return zones;
}

function spread(list, x0, x1) {
  const n = list.length;
  list.forEach((node, i) => {
    node.x = n === 1 ? (x0 + x1) / 2 : x0 + ((i + 0.5) * (x1 - x0)) / n;
  });
}

// Boxes of two nodes overlap (with `gap` units to spare): what the layout must never do.
export function overlaps(p, q, gap = 0) {
  return Math.abs(p.x - q.x) * 2 < p.w + q.w + 2 * gap && Math.abs(p.y - q.y) * 2 < p.h + q.h + 2 * gap;
}
