/* The flame page's views in a real browser (puppeteer-core, Debian's chromium), on pages made by
 * browser_flame_views.sh: OUTDIR/tf_flame.html (modern_h100_timesformer, GPU weight) and
 * OUTDIR/nccl_flame.html (medium_a100_nccl, three ProfilerSteps). Each check is one item of
 * issue 36 ("Flame graph"): the first view's name says its order; folded single-child Python
 * frames bring ops and kernels onto the first screen; "merge numbered instances" merges
 * ProfilerStep#N; the status line follows the view, merge and frames switches; the nn.Module view
 * goes down to the ops and kernels.
 * usage: node flame_views.js CHROMIUM OUTDIR. Prints ok/FAIL lines; exit 1 when a check failed. */
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
  await page.setViewport({ width: w || 1280, height: h || 800 });
  page.on('pageerror', (e) => check(false, file + ': page error ' + e.message));
  await page.goto('file://' + path.resolve(outDir, file));
  await page.waitForSelector('html[data-ready="1"]', { timeout: 60000 });
  return page;
}

/* Frames drawn inside the window (row bottom above the fold), at least 20 px wide, whose name
 * matches re (a regular expression source). */
function onScreen(page, re) {
  return page.evaluate((src) => {
    const g = window.gpFlame, c = document.querySelector('#gp-flame canvas');
    let t = g && g.tree;
    if (!t) { /* a page without the hook: the tree as the data holds it */
      const D = JSON.parse(document.getElementById('gp-data').textContent), F = D.frames;
      t = { nm: [], tot: [], dep: [] };
      for (let i = 0; i < F.length / 6; i++) {
        t.nm.push(D.names[F[i * 6 + 4]]); t.tot.push(F[i * 6 + 1]); t.dep.push(i ? t.dep[F[i * 6]] + 1 : 0);
      }
    }
    if (!c) return [];
    const r = c.getBoundingClientRect(), sc = (r.width - 20) / (t.tot[0] || 1), rx = new RegExp(src), out = [];
    for (let i = 0; i < t.nm.length; i++)
      if (rx.test(t.nm[i]) && r.top + (t.dep[i] + 1) * 17 <= window.innerHeight && t.tot[i] * sc >= 20) out.push(t.nm[i]);
    return out;
  }, re);
}

async function firstScreen(browser) {
  for (const w of [1280, 1600]) {
    const page = await open(browser, 'tf_flame.html', w, 800);
    const btn = await page.$eval('button[data-view="flame"]', (b) => b.textContent);
    check(!/time order/i.test(btn), w + ' px: the first view does not claim a time order (' + btn + ')');
    const ops = await onScreen(page, '^aten::'), kernels = await onScreen(page, '(kernel|gemm|Kernel)');
    check(ops.length > 0 && kernels.length > 0,
          w + ' px: GPU-weighted flame shows ' + ops.length + ' ops and ' + kernels.length + ' kernels at least 20 px wide on the first screen');
    await shot(page, 'tf_flame_' + w + '.png');
    await page.close();
  }
}

async function status(browser) {
  const page = await open(browser, 'tf_flame.html');
  const st = () => page.evaluate(() => {
    const s = document.getElementById('gp-status'), f = document.getElementById('gp-flame');
    return { text: s ? s.textContent : '', inSub: !!(s && s.closest('.gp-sub')), tree: +f.getAttribute('data-tree-frames') };
  });
  const a = await st();
  check(a.inSub && /flame by name/.test(a.text) && a.text.indexOf(a.tree.toLocaleString('en-US') + ' frames') >= 0,
        'status line at first: ' + a.text);
  await page.click('button[data-view="left"]');
  const b = await st();
  check(/left heavy/.test(b.text), 'status line after Left heavy: ' + b.text);
  await page.click('#gp-merge');
  const c = await st();
  check(/merged/.test(c.text) && c.text.indexOf(c.tree.toLocaleString('en-US') + ' frames') >= 0 && c.tree < a.tree,
        'status line after merging: ' + c.text);
  await page.click('button[data-view="table"]');
  check(/self time/.test((await st()).text), 'status line after Self time: ' + (await st()).text);
  await page.click('button[data-by="module"]');
  const d = await st();
  check(d.inSub && d.text.indexOf(d.tree.toLocaleString('en-US') + ' frames') >= 0 && d.tree !== c.tree,
        'status line after nn.Module: ' + d.text);
  await page.close();
}

/* The nn.Module view goes down to the ops and their kernels: the softmax kernel of an attention
 * module is a frame under it, and on the first screen. */
async function moduleLeaves(browser) {
  const page = await open(browser, 'tf_flame.html', 1280, 800);
  await page.click('button[data-by="module"]');
  const r = await page.evaluate(() => {
    const t = window.gpFlame ? window.gpFlame.tree : null;
    if (!t) { /* a page without the hook: the module tree as the data holds it */
      const D = JSON.parse(document.getElementById('gp-data').textContent).alt, F = D.frames;
      const u = { nm: [], par: [], tot: [] };
      for (let i = 0; i < F.length / 6; i++) { u.nm.push(D.names[F[i * 6 + 4]]); u.par.push(F[i * 6]); u.tot.push(F[i * 6 + 1]); }
      return { t: u };
    }
    return { t: { nm: t.nm, par: t.par, tot: t.tot } };
  });
  const t = r.t, out = [];
  for (let i = 1; i < t.nm.length; i++) {
    if (!/softmax/i.test(t.nm[i]) || !/kernel|void /.test(t.nm[i])) continue;
    const up = [];
    for (let a = t.par[i]; a > 0; a = t.par[a]) up.push(t.nm[a]);
    out.push({ name: t.nm[i], share: t.tot[i] / t.tot[0], op: up[0], attention: up.some((n) => /Attention/i.test(n)) });
  }
  const best = out.sort((a, b) => b.share - a.share)[0];
  check(best && /^aten::/.test(best.op) && best.attention,
        'nn.Module view: the softmax kernel is a leaf under its op and an attention module (' +
        (best ? best.name.slice(0, 60) + ' under ' + best.op + ', ' + (100 * best.share).toFixed(1) + ' %' : 'no softmax kernel frame') + ')');
  const kernels = await onScreen(page, '(kernel|gemm|Kernel)');
  check(kernels.length > 0, 'nn.Module view: ' + kernels.length + ' kernels at least 20 px wide on the first screen');
  await shot(page, 'tf_flame_modules.png');
  await page.close();
}

async function mergeSteps(browser) {
  const page = await open(browser, 'nccl_flame.html');
  /* the self-time table lists the names of the tree shown */
  await page.click('button[data-view="table"]');
  const names = () => page.$$eval('#gp-table td.gp-name', (tds) => tds.map((td) => td.textContent).filter((n) => /^ProfilerStep/.test(n)));
  const a = await names();
  await page.click('#gp-merge');
  await page.click('button[data-view="table"]');
  const b = await names();
  check(a.length >= 2 && b.length === 1 && b[0] === 'ProfilerStep',
        'merge numbered instances: ' + a.join(', ') + ' become ' + b.join(', '));
  await page.close();
}

(async () => {
  const browser = await puppeteer.launch({
    executablePath: chrome, headless: true,
    args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--no-first-run'],
  });
  try {
    for (const t of [firstScreen, status, moduleLeaves, mergeSteps]) {
      try { await t(browser); } catch (e) { check(false, t.name + ': ' + e.message); }
    }
  } finally { await browser.close(); }
  console.log(fails ? fails + ' check(s) failed' : 'all flame view checks passed');
  process.exit(fails ? 1 : 0);
})();
