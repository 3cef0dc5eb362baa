/* Scripted interaction tests of the report pages in a real browser: puppeteer-core (npm) driving
 * Debian's chromium. Pages are made by browser_test.sh; this script opens them, acts as a user
 * (types, clicks, hovers, shift+drags) and asserts on what the page shows.
 * usage: node browser_interact.js CHROMIUM OUTDIR
 *   OUTDIR holds vit_timeline.html, vit_report.html, dlrm_timeline.html, tf_flame.html (made by
 *   browser_test.sh from the shared traces); screenshots go to OUTDIR/screenshots.
 * Prints "ok: ..." / "FAIL: ..." lines; exit status 1 when a check failed. */
'use strict';
const puppeteer = require('puppeteer-core');
const path = require('path');

const [chrome, outDir] = process.argv.slice(2);
let fails = 0;
function check(cond, what) {
  console.log((cond ? 'ok: ' : 'FAIL: ') + what);
  if (!cond) fails++;
}
const url = (f) => 'file://' + path.resolve(outDir, f);
const shot = (page, name) => page.screenshot({ path: path.join(outDir, 'screenshots', name) });

async function open(browser, file, w, h) {
  const page = await browser.newPage();
  await page.setViewport({ width: w || 1400, height: h || 900 });
  page.on('pageerror', (e) => check(false, file + ': page error ' + e.message));
  await page.goto(url(file));
  await page.waitForSelector('html[data-ready="1"]', { timeout: 60000 });
  return page;
}

/* The screen position of the timeline's selected event (its left part, mid-height). */
async function selectedXY(page) {
  return page.evaluate(() => {
    const tl = window.gpTimelines[0], s = tl.sel, L = s.row.lvs[s.level];
    const r = tl.canvas.getBoundingClientRect(), y = tl.place(s);
    const x0 = Math.max(tl.X(L.ts[s.i]), 221), x1 = Math.min(tl.X(L.end[s.i]), tl.W);
    return { x: r.left + (x0 + x1) / 2, y: r.top + y + 8 };
  });
}

async function timelineVit(browser) {
  const page = await open(browser, 'vit_timeline.html');
  /* first screen: the first track is a GPU stream, drawn at the top of the canvas */
  const first = await page.$eval('#gp-tl', (e) => e.getAttribute('data-first-track'));
  check(/^GPU \d+ stream \d+$/.test(first), 'vit timeline: first track is a GPU stream (' + first + ')');
  const py = await page.$eval('#gp-tl-py', (e) => e.checked);
  check(py, 'vit timeline: Python frames shown by default');
  await shot(page, 'vit_timeline_first_screen.png');

  /* search: a kernel name, match count, next/previous move through the matches in time order */
  await page.type('#gp-tl-search', 'gemm');
  const count = +(await page.$eval('#gp-tl-count', (e) => e.getAttribute('data-count')));
  check(count > 1, 'vit timeline: search "gemm" finds ' + count + ' events');
  await page.click('#gp-tl-next');
  const a = await page.$eval('#gp-tl-count', (e) => [e.getAttribute('data-index'), +e.getAttribute('data-match-ts'), e.textContent]);
  const selA = await page.$eval('#gp-tl-details', (e) => e.getAttribute('data-selected'));
  await page.click('#gp-tl-next');
  const b = await page.$eval('#gp-tl-count', (e) => [e.getAttribute('data-index'), +e.getAttribute('data-match-ts')]);
  check(a[0] === '1' && b[0] === '2' && b[1] >= a[1], 'vit timeline: next moves 1 -> 2 (' + a[2] + ')');
  check(/gemm/i.test(selA || ''), 'vit timeline: the match is selected (' + (selA || '').slice(0, 60) + ')');
  await page.click('#gp-tl-prev');
  const c = await page.$eval('#gp-tl-count', (e) => [e.getAttribute('data-index'), +e.getAttribute('data-match-ts')]);
  check(c[0] === '1' && c[1] === a[1], 'vit timeline: previous moves back to match 1');

  /* the details panel lists the kernel's args; hovering it shows grid and block */
  const det = await page.$eval('#gp-tl-details', (e) => e.textContent);
  check(/grid/.test(det) && /block/.test(det) && /correlation/.test(det), 'vit timeline: details list grid, block, correlation');
  check(/launched by/.test(det), 'vit timeline: details name the launch');
  check(/op Input Dims\s*\[\[/.test(det), 'vit timeline: a kernel\'s details list its op\'s Input Dims');
  const xy = await selectedXY(page);
  await page.mouse.move(xy.x, xy.y);
  await page.waitForSelector('#gp-tl-tip[data-name]', { timeout: 5000 }).catch(() => null);
  const tip = await page.$eval('#gp-tl-tip', (e) => [e.style.display, e.textContent]);
  check(tip[0] === 'block' && /grid \[\d+, \d+, \d+\]/.test(tip[1]) && /block \[\d+, \d+, \d+\]/.test(tip[1]),
        'vit timeline: hover shows grid and block (' + tip[1].slice(-60) + ')');
  await shot(page, 'vit_timeline_search_hover.png');

  /* go to the launch: selects the runtime call on the CPU thread */
  await page.click('#gp-tl-goto');
  const launch = await page.$eval('#gp-tl-details', (e) => e.getAttribute('data-selected'));
  check(/Launch|cuda|cu[A-Z]/.test(launch || ''), 'vit timeline: "go to launch" selects ' + launch);

  /* click an aten op: its details list Input Dims and Input type (record_shapes) */
  await page.evaluate(() => {
    window.scrollTo(0, 0); /* the "go to" click scrolled the page to the panel */
    const tl = window.gpTimelines[0], s = tl.find('aten::addmm');
    tl.reveal(s, true); tl.select(s);
  });
  const opXY = await selectedXY(page);
  await page.evaluate(() => window.gpTimelines[0].select(null));
  await page.mouse.click(opXY.x, opXY.y);
  const op = await page.$eval('#gp-tl-details', (e) => [e.getAttribute('data-selected'), e.innerText]);
  check(op[0] === 'aten::addmm' && /Input Dims\s*\[\[\d/.test(op[1]) && /Input type\s*\["/.test(op[1]),
        'vit timeline: clicking aten::addmm shows its Input Dims and Input type (' + op[0] + ': ' + op[1].slice(0, 120).replace(/\s+/g, ' ') + ')');
  await shot(page, 'vit_timeline_op_shapes.png');

  /* range selection: shift+drag over the whole GPU track aggregates its events per name */
  await page.keyboard.press('0');
  const box = await page.evaluate(() => {
    const tl = window.gpTimelines[0], r = tl.canvas.getBoundingClientRect(), it = tl.items[0];
    const want = {};
    const lv = tl.levels(it.row);
    let n = 0;
    for (let d = 0; d < lv.length; d++) n += lv[d].n;
    return { x0: r.left + 222, x1: r.left + tl.W - 2, y: r.top + it.y - tl.scrollY + 4, n: n };
  });
  await page.mouse.move(box.x0, box.y);
  await page.keyboard.down('Shift');
  await page.mouse.down();
  await page.mouse.move((box.x0 + box.x1) / 2, box.y + 4, { steps: 4 });
  await page.mouse.move(box.x1, box.y + 6, { steps: 4 });
  await page.mouse.up();
  await page.keyboard.up('Shift');
  const agg = await page.$eval('#gp-tl-agg', (e) => [+e.getAttribute('data-rows'), +e.getAttribute('data-events'), e.textContent]);
  check(agg[0] > 3 && /gemm/.test(agg[2]), 'vit timeline: range selection aggregates ' + agg[0] + ' names');
  check(agg[1] > 0 && agg[1] <= box.n, 'vit timeline: ' + agg[1] + ' events in the selection, GPU track has ' + box.n);
  await shot(page, 'vit_timeline_range.png');

  /* Python frames on by default: turning the toggle off takes levels from the CPU thread, on
   * again gives them back */
  const before = await page.$eval('#gp-tl', (e) => window.gpTimelines[0].contentH);
  await page.click('#gp-tl-py');
  const off = await page.$eval('#gp-tl', (e) => window.gpTimelines[0].contentH);
  await page.click('#gp-tl-py');
  const after = await page.$eval('#gp-tl', (e) => window.gpTimelines[0].contentH);
  check(off < before && after === before, 'vit timeline: Python frames toggle shows less when off (' + before + ' -> ' + off + ' -> ' + after + ' px)');

  /* zoom: ctrl+wheel zooms, a plain wheel scrolls, the view stays inside the trace */
  const span = await page.evaluate(() => window.gpTimelines[0].span);
  await page.mouse.move(box.x0 + 300, box.y);
  await page.keyboard.down('Control');
  for (let i = 0; i < 5; i++) await page.mouse.wheel({ deltaY: 400 });
  await page.keyboard.up('Control');
  const v = await page.evaluate(() => [window.gpTimelines[0].v0, window.gpTimelines[0].v1]);
  check(v[0] >= 0 && v[1] <= span && v[1] - v[0] === span, 'vit timeline: zooming out stops at the trace (' + v.join(', ') + ')');
  for (let i = 0; i < 8; i++) await page.keyboard.press('w');
  const v2 = await page.evaluate(() => [window.gpTimelines[0].v0, window.gpTimelines[0].v1]);
  check(v2[1] - v2[0] < span / 4, 'vit timeline: W zooms in');
  /* hash state is followed */
  await page.evaluate(() => { location.hash = '#t0=1000&t1=2000000'; });
  await page.waitForFunction(() => window.gpTimelines[0].v0 === 1000, { timeout: 5000 }).catch(() => null);
  const v3 = await page.evaluate(() => [window.gpTimelines[0].v0, window.gpTimelines[0].v1]);
  check(v3[0] === 1000 && v3[1] === 2000000, 'vit timeline: hashchange moves the view (' + v3.join(', ') + ')');
  await page.close();
}

async function timelineDlrm(browser) {
  const page = await open(browser, 'dlrm_timeline.html');
  const rows = () => page.$eval('#gp-tl', (e) => +e.getAttribute('data-visible-rows'));
  check((await rows()) === 8, '8-rank timeline: one row per rank at first (' + (await rows()) + ')');
  await shot(page, 'dlrm_timeline_collapsed.png');
  await page.click('#gp-tl-collapse');
  const open8 = await rows();
  check(open8 > 16, '8-rank timeline: expanding shows ' + open8 + ' rows');
  await page.click('#gp-tl-collapse');
  check((await rows()) === 8, '8-rank timeline: collapsing again gives 8 rows');
  await page.select('#gp-tl-rank', '3');
  const only = await page.evaluate(() => window.gpTimelines[0].items.map((i) => i.rank === undefined ? i.row.rank : i.rank));
  check(only.length >= 1 && only.every((r) => r === 3), '8-rank timeline: rank selector shows rank 3 only');
  await page.close();
}

async function dashboard(browser) {
  const page = await open(browser, 'vit_report.html', 1400, 1000);
  /* every bar of a partition chart adds up to the wall time (within 1 %) */
  const bars = await page.$$eval('svg.gp-part', (svgs) => svgs.map((s) => {
    let sum = 0;
    s.querySelectorAll('rect[data-v]').forEach((r) => { sum += +r.getAttribute('data-v'); });
    return { id: s.id, wall: +s.getAttribute('data-wall'), sum: sum };
  }));
  const wall = +(await page.$eval('#gp-where', (e) => e.getAttribute('data-wall')));
  const walls = bars.filter((b) => /^gp-(cpu|gpu)-parts-/.test(b.id));
  check(walls.length >= 2 && walls.every((b) => b.wall === wall),
        'vit report: ' + walls.length + ' thread/stream bars are of the wall time ' + wall + ' ns');
  check(bars.length >= 2, 'vit report: ' + bars.length + ' partition bars');
  /* the cause (top finding, critical path) is above the fold, before the wall-time charts */
  const cause = await page.$eval('#gp-cause', (e) => ({ top: e.getBoundingClientRect().top,
    text: (e.querySelector('#gp-cause-top, #gp-cause-none') || { textContent: '' }).textContent,
    path: !!e.querySelector('#gp-critpath, #gp-critpath-na') }));
  const whereTop = await page.$eval('#gp-where', (e) => e.getBoundingClientRect().top);
  check(cause.top < 1000 && cause.top < whereTop && cause.text.length > 10 && cause.path,
        'vit report: the cause is above the fold (top ' + Math.round(cause.top) + ' px): ' + cause.text.slice(0, 60));
  bars.forEach((b) => check(b.wall > 0 && Math.abs(b.sum - b.wall) <= 0.01 * b.wall,
                            'vit report: ' + b.id + ' sums to ' + b.sum + ' of wall ' + b.wall));
  await page.close();
}

async function flame(browser) {
  const printed = +(require('fs').readFileSync(path.join(outDir, 'vit_flame.out'), 'utf8').match(/\((\d+) frames/) || [0, -1])[1];
  const page = await open(browser, 'vit_flame.html', 1000, 700);
  if (await page.$('#gp-fold')) await page.click('#gp-fold'); /* every frame: Python frames unfolded */
  const f = () => page.$eval('#gp-flame', (e) => ({ frames: +e.getAttribute('data-frames'), tree: +e.getAttribute('data-tree-frames'),
    drawn: +e.getAttribute('data-drawn'), view: e.getAttribute('data-view'), w: e.querySelector('canvas') ? e.querySelector('canvas').width : 0 }));
  const a = await f();
  check(a.frames === printed && a.tree === printed, 'vit flame: the page has the ' + printed + ' frames the CLI printed');
  const title = await page.title();
  check(/modern_h100_vit/.test(title), 'vit flame: the title is the trace name (' + title + ')');
  await page.setViewport({ width: 1600, height: 700 });
  await page.waitForFunction((w) => document.querySelector('#gp-flame canvas').width > w, { timeout: 5000 }, a.w).catch(() => null);
  const b = await f();
  check(b.w > a.w, 'vit flame: the canvas follows the window (' + a.w + ' -> ' + b.w + ' px)');
  await page.click('button[data-view="left"]');
  check((await f()).view === 'left', 'vit flame: left-heavy view');
  await page.click('#gp-merge');
  const m = await f();
  check(m.tree < printed, 'vit flame: merging numbered instances leaves ' + m.tree + ' of ' + printed + ' frames');
  await page.click('button[data-view="table"]');
  const rows = +(await page.$eval('#gp-table', (e) => e.getAttribute('data-rows')));
  check(rows > 10, 'vit flame: self-time table with ' + rows + ' names');
  await page.click('#gp-table tbody tr');
  const sw = await f();
  check(sw.view === 'sandwich' && (await page.$$('#gp-flame canvas')).length === 2, 'vit flame: a table row opens its sandwich (callers, callees)');
  await shot(page, 'vit_flame_sandwich.png');
  await page.close();
}

(async () => {
  const browser = await puppeteer.launch({
    executablePath: chrome, headless: true,
    args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--no-first-run'],
  });
  try {
    for (const t of [timelineVit, timelineDlrm, dashboard, flame]) {
      try { await t(browser); } catch (e) { check(false, t.name + ': ' + e.message); }
    }
  } finally { await browser.close(); }
  console.log(fails ? fails + ' interaction check(s) failed' : 'all interaction checks passed');
  process.exit(fails ? 1 : 0);
})();
