/* The timeline's navigation in a real browser (puppeteer-core, Debian's chromium), on pages made
 * by browser_timeline_nav.sh: OUTDIR/tf_timeline.html (modern_h100_timesformer) and
 * OUTDIR/dlrm_timeline.html (the 8-rank job). Each check is one item of issue 36 ("Timeline"):
 * search Enter centres, zooms and outlines a narrow hit; hits stay visible at full zoom-out (the
 * level-of-detail columns); F frames the selection; a #sel= link shows the arguments at once and an
 * unmatched one says so; the tooltip follows a wheel scroll; folded single-child Python frames
 * bring the ops into the first 8 levels; the ruler counts from an origin at µs zoom; long C++
 * names stay on one line in the selection table; a job opens on the span where its ranks work;
 * selecting a collective outlines it on every rank (issue 33).
 * usage: node timeline_nav.js CHROMIUM OUTDIR. Prints ok/FAIL lines; exit 1 when a check failed. */
'use strict';
const puppeteer = require('puppeteer-core');
const path = require('path');

const [chrome, outDir] = process.argv.slice(2);
let fails = 0;
function check(cond, what) {
  console.log((cond ? 'ok: ' : 'FAIL: ') + what);
  if (!cond) fails++;
}
const shot = (page, name) => page.screenshot({ path: path.join(outDir, 'screenshots', name) });

async function open(browser, file, w, h) {
  const page = await browser.newPage();
  await page.setViewport({ width: w || 1400, height: h || 900 });
  page.on('pageerror', (e) => check(false, file + ': page error ' + e.message));
  await page.goto('file://' + path.resolve(outDir, file));
  await page.waitForSelector('html[data-ready="1"]', { timeout: 60000 });
  return page;
}

/* The selection's box on the canvas (px, canvas coordinates) and the view. */
function selBox(page) {
  return page.evaluate(() => {
    const tl = window.gpTimelines[0], s = tl.sel;
    if (!s) return null;
    const L = s.row.lvs[s.level];
    return { x0: tl.X(L.ts[s.i]), x1: tl.X(L.end[s.i]), y: tl.place(s), W: tl.W,
             name: tl.names[L.name[s.i]], ts: L.ts[s.i], v0: tl.v0, v1: tl.v1 };
  });
}

/* Canvas pixels of the selection outline's colour (#0030ff) within 12 px of x. */
function outlinePx(page, x) {
  return page.evaluate((x) => {
    const c = document.querySelector('#gp-tl canvas'), r = c.width / c.clientWidth;
    const x0 = Math.max(0, Math.round((x - 12) * r)), w = Math.round(24 * r);
    const d = c.getContext('2d').getImageData(x0, 0, w, c.height).data;
    let n = 0;
    for (let i = 0; i < d.length; i += 4) if (d[i] < 20 && Math.abs(d[i + 1] - 0x30) < 16 && d[i + 2] > 235) n++;
    return n;
  }, x);
}

async function search(page) {
  const q = 'softmax_warp_forward'; /* 12 kernels, each narrower than a pixel at full view */
  await page.type('#gp-tl-search', q);
  /* every hit's pixel column is painted in a hit's colour, not the dimmed grey */
  const cols = await page.evaluate(() => {
    const tl = window.gpTimelines[0], c = tl.canvas, ctx = c.getContext('2d'), r = c.width / c.clientWidth;
    const out = { hits: 0, grey: 0 };
    tl.matches.forEach((m) => {
      m.row.lvs = m.lvs;
      const y = tl.place({ row: m.row, level: m.level, i: m.i });
      if (y === null) return;
      const px = Math.floor(tl.X(m.t)), d = ctx.getImageData(Math.floor((px + 0.5) * r), Math.floor((y + 6) * r), 1, 1).data;
      out.hits++;
      if (d[0] === 0xe4 && d[1] === 0xe4 && d[2] === 0xe4) out.grey++;
    });
    return out;
  });
  check(cols.hits >= 12 && cols.grey === 0, 'search at full view: ' + cols.hits + ' hits drawn, ' + cols.grey + ' of them greyed out by the level of detail');
  await page.keyboard.press('Enter');
  const b = await selBox(page);
  const mid = (220 + b.W) / 2;
  check(b && b.name.indexOf(q) >= 0, 'Enter selects the first hit (' + (b && b.name.slice(0, 60)) + ')');
  check(b.x1 - b.x0 >= 2, 'Enter zooms a narrow hit to ' + (b.x1 - b.x0).toFixed(1) + ' px (>= 2)');
  check(Math.abs((b.x0 + b.x1) / 2 - mid) < 0.05 * (b.W - 220), 'Enter centres the hit (' + ((b.x0 + b.x1) / 2).toFixed(0) + ' vs ' + mid + ')');
  const o1 = await outlinePx(page, (b.x0 + b.x1) / 2);
  check(o1 > 20, 'the hit is outlined (' + o1 + ' px of the outline colour)');
  await shot(page, 'tf_search_enter.png');
  /* zoomed out, the selected sub-pixel kernel is still outlined (keys act outside the search field) */
  await page.evaluate(() => document.activeElement.blur());
  await page.keyboard.press('0');
  const b0 = await selBox(page), o0 = await outlinePx(page, (b0.x0 + b0.x1) / 2);
  check(b0.x1 - b0.x0 < 1 && o0 > 20, 'at full view the ' + (b0.x1 - b0.x0).toFixed(2) + ' px hit is outlined (' + o0 + ' px)');
  /* F frames the selection */
  await page.keyboard.press('f');
  const bf = await selBox(page);
  check(bf.x1 - bf.x0 > 0.6 * (bf.W - 220) && bf.x0 >= 219 && bf.x1 <= bf.W + 1,
        'F frames the selection (' + (bf.x1 - bf.x0).toFixed(0) + ' of ' + (bf.W - 220) + ' px)');
  /* the ruler counts from the selection's start at µs zoom; a click on the ruler moves the origin */
  const ru = await page.$eval('#gp-tl', (e) => [e.getAttribute('data-ruler'), e.getAttribute('data-ruler-origin')]);
  check(ru[1] !== null && Math.abs(+ru[1] - bf.ts) < 1 && /(^|\|)\+\d/.test(ru[0] || ''),
        'µs zoom: the ruler counts from the selection start ' + bf.ts + ' (' + (ru[0] || '').split('|').slice(0, 3).join(' ') + ')');
  const cr = await page.evaluate(() => document.querySelector('#gp-tl canvas').getBoundingClientRect().toJSON());
  await page.mouse.click(cr.left + 220 + 100, cr.top + 10);
  const want = await page.evaluate(() => window.gpTimelines[0].T(320));
  const ru2 = await page.$eval('#gp-tl', (e) => +e.getAttribute('data-ruler-origin'));
  check(Math.abs(ru2 - want) < 1, 'a click on the ruler sets the origin there (' + ru2.toFixed(0) + ' ns)');
  await shot(page, 'tf_frame_ruler.png');
}

async function linkSel(browser) {
  const page = await open(browser, 'tf_timeline.html#sel=softmax_warp_forward');
  const d = await page.$eval('#gp-tl-details', (e) => [e.getAttribute('data-selected'), e.innerText]);
  check(/softmax_warp_forward/.test(d[0] || '') && /grid\s+\[\d/.test(d[1]) && /correlation\s+\d/.test(d[1]),
        '#sel= shows the kernel with its grid and correlation at once (' + d[1].slice(0, 100).replace(/\s+/g, ' ') + ')');
  await page.close();
  const p2 = await open(browser, 'tf_timeline.html#sel=no_such_event_zz');
  const u = await p2.$eval('#gp-tl-details', (e) => [e.getAttribute('data-unmatched'), e.textContent]);
  check(u[0] === 'no_such_event_zz' && /No event matches/.test(u[1]), 'an unmatched #sel= says so (' + u[1] + ')');
  await p2.close();
}

async function python(page) {
  check(await page.$eval('#gp-tl-py', (e) => e.checked), 'Python frames are on when the page opens');
  const r = await page.evaluate(() => {
    const tl = window.gpTimelines[0];
    return tl.items.filter((it) => it.row && it.row.py).map((it) => {
      const lv = tl.levels(it.row);
      let first = -1;
      for (let d = 0; d < lv.length && first < 0; d++)
        for (let i = 0; i < lv[d].n; i++) if (tl.kinds[lv[d].kind[i]] === 'cpu_op') { first = d; break; }
      return { label: it.row.label, first: first, shown: it.shown, total: it.total };
    });
  });
  const main = r.filter((x) => x.first >= 0);
  check(main.length > 0 && main.every((x) => x.first < x.shown && x.first < 8),
        'Python frames on: the ops are in the first 8 levels (' + main.map((x) => x.label + ' first op at level ' + x.first + ' of ' + x.total).join('; ') + ')');
  await shot(page, 'tf_python_folded.png');
}

/* Every event at least 20 px wide on the first screen is painted at its middle, even one that
 * starts in the same pixel column as narrower events of its level (ProfilerStep#6 on the CPU
 * thread starts within a pixel of the profiler's own tiny calls: the level-of-detail column used
 * to swallow it, leaving the thread's first levels empty). */
async function wideEvents(browser) {
  const page = await open(browser, 'tf_timeline.html', 1280, 1000);
  const r = await page.evaluate(() => {
    const tl = window.gpTimelines[0], c = tl.canvas, ctx = c.getContext('2d'), k = c.width / c.clientWidth;
    const bg = ctx.getImageData(Math.round((tl.W - 2) * k), Math.round((tl.H - 2) * k), 1, 1).data;
    let wide = 0, painted = 0; const missing = [];
    tl.items.forEach((it) => {
      if (it.type !== 'track' || !it.row || it.row.ts) return;
      const lv = tl.levels(it.row);
      for (let d = 0; d < Math.min(lv.length, it.shown); d++) {
        const L = lv[d];
        for (let i = 0; i < L.n; i++) {
          const x0 = Math.max(tl.X(L.ts[i]), 0), x1 = Math.min(tl.X(L.end[i]), tl.W);
          const y = tl.place({ row: it.row, level: d, i: i });
          if (x1 - x0 < 20 || y === null || y < 0 || y > tl.H - 8) continue;
          wide++;
          const px = ctx.getImageData(Math.round((x0 + x1) / 2 * k), Math.round((y + 4) * k), 1, 1).data;
          if (px[0] !== bg[0] || px[1] !== bg[1] || px[2] !== bg[2]) painted++;
          else missing.push(tl.names[L.name[i]]);
        }
      }
    });
    return { wide: wide, painted: painted, missing: missing.slice(0, 3) };
  });
  check(r.wide >= 10 && r.painted === r.wide, 'every wide event is painted on the first screen (' +
        r.painted + ' of ' + r.wide + (r.missing.length ? '; missing ' + r.missing.join(', ') : '') + ')');
  await shot(page, 'tf_wide_events.png');
  await page.close();
}

async function selectionTable(page) {
  /* shift+drag over the GPU track's kernels 100 to 200: the long kernel names stay on one line */
  await page.evaluate(() => { const tl = window.gpTimelines[0], g = tl.rows[0], L = tl.levels(g)[1];
    tl.setView(L.ts[100], L.end[200]); tl.scrollTo(0); tl.refresh(); });
  const box = await page.evaluate(() => {
    const tl = window.gpTimelines[0], r = tl.canvas.getBoundingClientRect(), it = tl.items[0];
    return { x0: r.left + 230, x1: r.left + tl.W - 4, y: r.top + it.y - tl.scrollY + 4 };
  });
  await page.mouse.move(box.x0, box.y);
  await page.keyboard.down('Shift');
  await page.mouse.down();
  await page.mouse.move(box.x1, box.y + 20, { steps: 5 });
  await page.mouse.up();
  await page.keyboard.up('Shift');
  const nrows = await page.$eval('#gp-tl-agg', (e) => e.getAttribute('data-rows'));
  check(+nrows > 3, 'selection table: ' + nrows + ' names in the selection');
  const h = await page.$$eval('#gp-tl-agg td.gp-name', (tds) => tds.map((td) => ({ h: td.getBoundingClientRect().height, n: td.textContent.length })));
  const long = h.filter((x) => x.n > 100), tall = h.filter((x) => x.h > 22);
  check(long.length > 0 && tall.length === 0, 'selection table: ' + long.length + ' names over 100 characters, ' + tall.length + ' rows taller than one line');
  await shot(page, 'tf_selection_table.png');
}

async function tooltipScroll(browser) {
  const page = await open(browser, 'dlrm_timeline.html', 1400, 900);
  await page.click('#gp-tl-collapse'); /* all ranks open: the tracks scroll */
  const p = await page.evaluate(() => {
    const tl = window.gpTimelines[0], r = tl.canvas.getBoundingClientRect();
    const it = tl.items.find((x) => x.type === 'track' && x.row.kind === 'gpu'), L = tl.levels(it.row)[0];
    let best = 0;
    for (let i = 1; i < L.n; i++) if (tl.X(L.end[i]) - tl.X(L.ts[i]) > tl.X(L.end[best]) - tl.X(L.ts[best])) best = i;
    return { x: r.left + (Math.max(tl.X(L.ts[best]), 221) + Math.min(tl.X(L.end[best]), tl.W)) / 2, y: r.top + it.y - tl.scrollY + 8 };
  });
  await page.mouse.move(p.x, p.y);
  const before = await page.$eval('#gp-tl-tip', (e) => e.getAttribute('data-name'));
  await page.mouse.wheel({ deltaY: 300 });
  await page.waitForFunction(() => window.gpTimelines[0].scrollY > 0, { timeout: 3000 }).catch(() => null);
  await new Promise((r) => setTimeout(r, 200));
  const after = await page.evaluate((p) => {
    const tl = window.gpTimelines[0], r = tl.canvas.getBoundingClientRect(), h = tl.hit(p.x - r.left, p.y - r.top);
    const tip = document.getElementById('gp-tl-tip');
    return { sy: tl.scrollY, want: h ? tl.names[h.row.lvs[h.level].name[h.i]] : null,
             got: tip.style.display === 'none' ? null : tip.getAttribute('data-name') };
  }, p);
  check(before && after.sy > 0 && after.want !== before && after.got === after.want,
        'the tooltip follows a wheel scroll of ' + after.sy + ' px (' + before + ' -> ' + after.got + ', under the pointer: ' + after.want + ')');
  await page.close();
}

/* Clicking a collective's kernel on rank 0 outlines the same collective on all 8 ranks (the
 * matching is the collectives analysis'; the page only draws it) and lists its members. */
async function collective(browser) {
  const page = await open(browser, 'dlrm_timeline.html', 1400, 900);
  const xy = await page.evaluate(() => {
    const tl = window.gpTimelines[0], row = tl.rows.find((r) => r.rank === 0 && r.kind === 'gpu' && r.coll);
    if (!row) return null;
    const lv = tl.levels(row);
    let s = null;
    for (let d = 0; d < lv.length && !s; d++)
      for (let i = 0; i < lv[d].n; i++) if (lv[d].coll && lv[d].coll[i]) { s = { row: row, level: d, i: i }; break; }
    if (!s) return null;
    row.lvs = lv;
    tl.reveal(s, true); /* opens rank 0 and zooms to the kernel; the other ranks stay collapsed */
    const L = lv[s.level], r = tl.canvas.getBoundingClientRect(), y = tl.place(s);
    const x0 = Math.max(tl.X(L.ts[s.i]), 221), x1 = Math.min(tl.X(L.end[s.i]), tl.W);
    return { x: r.left + (x0 + x1) / 2, y: r.top + y + 8, name: tl.names[L.name[s.i]] };
  });
  check(xy !== null, 'the 8-rank job\'s page marks collective kernels (' + (xy && xy.name.slice(0, 50)) + ')');
  if (!xy) { await page.close(); return; }
  await page.mouse.click(xy.x, xy.y);
  const d = await page.evaluate(() => {
    const det = document.getElementById('gp-tl-details'), el = document.getElementById('gp-tl');
    return { coll: det.getAttribute('data-coll'), text: det.innerText, shown: +el.getAttribute('data-coll-shown') };
  });
  const ranks = (d.text.match(/rank \d+ starts/g) || []).length;
  check(d.coll !== null && /collective\s+\S+ #\d+ of group/.test(d.text) && ranks === 8,
        'selecting it names the collective and its 8 members (' + (d.text.match(/collective[^\n]*/) || [''])[0] + ')');
  /* orange outlines in 8 different rows of the canvas */
  const rows = await page.evaluate(() => {
    const c = document.querySelector('#gp-tl canvas'), r = c.width / c.clientWidth, tl = window.gpTimelines[0];
    const dd = c.getContext('2d').getImageData(0, 0, c.width, c.height).data, hit = new Set();
    for (let y = 0; y < c.height; y++)
      for (let x = Math.round(220 * r); x < c.width; x++) {
        const k = (y * c.width + x) * 4;
        if (dd[k] === 0xff && Math.abs(dd[k + 1] - 0x7a) < 8 && dd[k + 2] < 10) {
          const it = tl.itemAt(y / r);
          if (it) hit.add(it.type === 'rank' ? 'rank ' + it.rank : 'rank ' + it.row.rank + ' ' + it.row.label);
          break;
        }
      }
    return [...hit];
  });
  const rk = new Set(rows.map((x) => x.split(' ')[1]));
  check(d.shown === 8 && rk.size === 8, 'the collective is outlined on ' + rk.size + ' ranks (' + d.shown + ' drawn): ' + rows.join('; '));
  await shot(page, 'dlrm_collective.png');
  await page.close();
}

async function jobSpan(browser) {
  const page = await open(browser, 'dlrm_timeline.html', 1600, 900);
  const r = await page.evaluate(() => {
    const tl = window.gpTimelines[0];
    let lo = Infinity, hi = -Infinity;
    tl.rows.forEach((row) => {
      if (row.ts || (row.kind !== 'gpu' && row.kind !== 'cpu')) return;
      tl.levels(row).forEach((L) => { for (let i = 0; i < L.n; i++) { lo = Math.min(lo, L.ts[i]); hi = Math.max(hi, L.end[i]); } });
    });
    return { lo: lo, hi: hi, v0: tl.v0, v1: tl.v1, span: tl.span };
  });
  check(r.v0 <= r.lo && r.v1 >= r.hi && r.v1 - r.v0 <= 1.05 * (r.hi - r.lo),
        '8-rank job opens on its ranks\' work ' + r.lo + '..' + r.hi + ' ns: view ' + r.v0 + '..' + r.v1 + ' (trace span ' + r.span + ')');
  await shot(page, 'dlrm_open_1600.png');
  await page.close();
}

(async () => {
  const browser = await puppeteer.launch({
    executablePath: chrome, headless: true,
    args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--no-first-run'],
  });
  try {
    const page = await open(browser, 'tf_timeline.html');
    for (const t of [search, selectionTable, python]) {
      try { await t(page); } catch (e) { check(false, t.name + ': ' + e.message); }
    }
    await page.close();
    for (const t of [linkSel, tooltipScroll, jobSpan, collective, wideEvents]) {
      try { await t(browser); } catch (e) { check(false, t.name + ': ' + e.message); }
    }
  } finally { await browser.close(); }
  console.log(fails ? fails + ' check(s) failed' : 'all timeline navigation checks passed');
  process.exit(fails ? 1 : 0);
})();
