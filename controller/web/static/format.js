// Colour scales and number formats shared by the drawing and the panels.
//
// `utilColor(u)`: a link direction's share of its tier's emulated rate
// (0..1, from the statistics snapshot) as a colour: dim when idle, then
// blue -> green -> yellow -> orange -> red at line rate. `queueColor(r)`: a
// port's queue fill (0..1). `mbps`, `pps`, `pct`, `seconds`, `bytes`, `standsFor`
// format figures the way the CLI prints them.

export const IDLE = "#2b3754";
const UTIL_STOPS = [
  [0.0, [56, 189, 248]],   // sky: the first bits
  [0.25, [34, 197, 94]],   // green
  [0.5, [234, 179, 8]],    // yellow
  [0.75, [249, 115, 22]],  // orange
  [1.0, [239, 68, 68]],    // red: line rate
];
export const IDLE_BELOW = 0.002;  // under 0.2 % (link probes, ARP): idle

export function utilColor(u) {
  if (u == null || !(u >= IDLE_BELOW)) return IDLE;
  return rgb(interpolate(UTIL_STOPS, Math.min(1, u)));
}

const QUEUE_STOPS = [[0.0, [196, 181, 253]], [0.5, [232, 121, 249]], [1.0, [244, 63, 94]]];
export function queueColor(r) {
  return rgb(interpolate(QUEUE_STOPS, Math.max(0, Math.min(1, r))));
}

// A CSS gradient of the utilisation scale, for the legend.
export function utilGradient() {
  return `linear-gradient(90deg, ${UTIL_STOPS.map(([s, c]) => `${rgb(c)} ${s * 100}%`).join(", ")})`;
}

function interpolate(stops, t) {
  for (let i = 1; i < stops.length; i++) {
    const [s1, c1] = stops[i];
    const [s0, c0] = stops[i - 1];
    if (t <= s1) {
      const f = (t - s0) / (s1 - s0);
      return c0.map((v, k) => Math.round(v + (c1[k] - v) * f));
    }
  }
  return stops[stops.length - 1][1];
}

const rgb = ([r, g, b]) => `rgb(${r}, ${g}, ${b})`;

export function mbps(bps) {
  if (bps == null) return "–";
  const m = bps / 1e6;
  if (m >= 100) return `${m.toFixed(0)} Mb/s`;
  if (m >= 1) return `${m.toFixed(2)} Mb/s`;
  if (bps >= 1000) return `${(bps / 1e3).toFixed(1)} kb/s`;
  return `${bps.toFixed(0)} b/s`;
}

export function pps(p) {
  if (p == null) return "–";
  return p >= 1000 ? `${(p / 1000).toFixed(1)}k pkt/s` : `${p.toFixed(0)} pkt/s`;
}

export function pct(u) {
  if (u == null) return "–";
  if (u > 0 && u < 0.001) return "<0.1 %";
  return `${(u * 100).toFixed(u < 0.1 ? 1 : 0)} %`;
}

// What an emulated rate stands for at the tier's scale (e.g. 20 Mb/s x 20000 -> 400 Gb/s).
export function standsFor(bps, scale) {
  if (bps == null || !scale) return "";
  const g = (bps * scale) / 1e9;
  return g >= 1 ? `≙ ${g.toFixed(g >= 100 ? 0 : 1)} Gb/s` : `≙ ${(g * 1000).toFixed(0)} Mb/s`;
}

export function seconds(s) {
  if (s == null) return "–";
  if (s < 1) return `${(s * 1000).toFixed(s < 0.01 ? 2 : 0)} ms`;
  return `${s.toFixed(s < 10 ? 2 : 1)} s`;
}

export function bytes(n) {
  if (n == null) return "–";
  const units = ["B", "KiB", "MiB", "GiB"];
  let v = n, i = 0;
  while (v >= 1024 && i < units.length - 1) { v /= 1024; i++; }
  return `${v.toFixed(i && v < 10 ? 1 : 0)} ${units[i]}`;
}

export function clock(at) {
  return new Date(at * 1000).toLocaleTimeString([], { hour12: false });
}

// Escape text for innerHTML.
export function esc(s) {
  return String(s ?? "").replace(/[&<>"']/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;",
    '"': "&quot;", "'": "&#39;" })[c]);
}
