// Placing point labels without overlaps: greedy, most important label first. Each label tries eight spots around
// its point (right, left, above, below, then the diagonals) and takes the first whose box stays inside the plot
// and clear of every box already taken; a label with no free spot is left out (its point keeps its hover title).
// Widths are estimated on the generous side (axes.js estimateWidth), so boxes that do not touch here do not
// touch in the browser either.
import { estimateWidth } from './axes.js';

/**
 * @typedef {{x0: number, y0: number, x1: number, y1: number}} Box
 * @typedef {{x: number, y: number, text: string, priority?: number, color?: string}} LabelRequest a label for the point (x, y), in pixels
 * @typedef {{x: number, y: number, text: string, color?: string, anchor: 'start'|'middle'|'end', box: Box}} PlacedLabel x, y: where the <text> goes
 */

/**
 * @param {Box} a
 * @param {Box} b
 */
export function boxesOverlap(a, b) {
  return a.x0 < b.x1 && b.x0 < a.x1 && a.y0 < b.y1 && b.y0 < a.y1;
}

/**
 * @param {LabelRequest[]} requests
 * @param {{bounds: Box, fontSize?: number, offset?: number, padding?: number, obstacles?: Box[]}} opts
 *   bounds: labels stay inside; obstacles: boxes labels must not cover (e.g. a legend)
 * @returns {{placed: PlacedLabel[], dropped: LabelRequest[]}}
 */
export function placeLabels(requests, opts) {
  const size = opts.fontSize ?? 11;
  const off = opts.offset ?? 4;
  const pad = opts.padding ?? 1.5;
  const ascent = 0.95 * size;
  const descent = 0.3 * size;
  /** @type {Box[]} */
  const taken = [...(opts.obstacles ?? [])];
  /** @type {PlacedLabel[]} */
  const placed = [];
  /** @type {LabelRequest[]} */
  const dropped = [];
  const order = requests.map((r, i) => ({ r, i })).sort((a, b) => (b.r.priority ?? 0) - (a.r.priority ?? 0) || a.i - b.i);
  for (const { r } of order) {
    const w = estimateWidth(r.text, size);
    const mid = r.y + (ascent - descent) / 2; // baseline that centres the text on the point
    /** @type {[number, number, 'start'|'middle'|'end'][]} */
    const spots = [
      [r.x + off, mid, 'start'], [r.x - off, mid, 'end'], [r.x, r.y - off - descent, 'middle'], [r.x, r.y + off + ascent, 'middle'],
      [r.x + off, r.y - off - descent, 'start'], [r.x - off, r.y - off - descent, 'end'],
      [r.x + off, r.y + off + ascent, 'start'], [r.x - off, r.y + off + ascent, 'end'],
    ];
    let done = false;
    for (const [x, y, anchor] of spots) {
      const left = anchor === 'start' ? x : anchor === 'end' ? x - w : x - w / 2;
      const box = { x0: left - pad, y0: y - ascent - pad, x1: left + w + pad, y1: y + descent + pad };
      const b = opts.bounds;
      if (box.x0 < b.x0 || box.y0 < b.y0 || box.x1 > b.x1 || box.y1 > b.y1) continue;
      if (taken.some((t) => boxesOverlap(t, box))) continue;
      taken.push(box);
      placed.push({ x, y, text: r.text, color: r.color, anchor, box });
      done = true;
      break;
    }
    if (!done) dropped.push(r);
  }
  return { placed, dropped };
}
