/* The dashboard's sort and filter of 100,000 operations, timed in headless Chromium, against a
 * baseline measured in the same page and run: the bare array work the page cannot avoid (an index
 * sort of the same rows by a Float64Array key; a regular-expression scan of the same names). The
 * page's figure adds its own keying and the redraw of the rows in view.
 * usage: node dash_sort.js CHROMIUM PAGE.html RUNS      (run by dash_sort.sh) */
'use strict';
const puppeteer = require('puppeteer-core');
const path = require('path');

const [chrome, file, runsArg] = process.argv.slice(2);
const runs = Math.max(1, +runsArg || 5);
const median = (a) => { const s = a.slice().sort((x, y) => x - y), m = s.length >> 1; return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2; };

(async () => {
  const browser = await puppeteer.launch({ executablePath: chrome, headless: true, args: ['--no-sandbox'] });
  const labels = ['sort calls', 'sort total', 'sort name (first)', 'sort self', 'filter op_0', 'filter op_01234', 'filter cleared', 'sort name (again)'];
  const page_ms = labels.map(() => []), base = { sort: [], scan: [] };
  for (let r = 0; r < runs; r++) {
    const page = await browser.newPage();
    await page.setViewport({ width: 1400, height: 900 });
    await page.goto('file://' + path.resolve(file), { waitUntil: 'load' });
    await page.waitForSelector('html[data-ready="1"]', { timeout: 120000 });
    const out = await page.evaluate(() => {
      const th = document.getElementById('gp-ops').tHead.rows[0].cells, f = document.getElementById('gp-filter');
      const ms = [], time = (fn) => { const t0 = performance.now(); fn(); ms.push(performance.now() - t0); };
      for (const c of [2, 3, 1, 4]) time(() => th[c].click());
      for (const v of ['op_0', 'op_01234', '']) time(() => { f.value = v; f.dispatchEvent(new Event('input')); });
      time(() => th[1].click());
      /* the baseline: the same number of rows, sorted by a numeric key and scanned by a regex */
      const n = +document.getElementById('gp-ops').getAttribute('data-rows');
      const key = new Float64Array(n), names = [];
      for (let i = 0; i < n; i++) { key[i] = (i * 7919) % 1000003; names.push('cpu_op op_' + String(i).padStart(6, '0')); }
      const idx = []; for (let i = 0; i < n; i++) idx.push(i);
      let t0 = performance.now(); idx.sort((a, b) => (key[b] - key[a]) || a - b); const sort = performance.now() - t0;
      const re = new RegExp('op_0', 'i');
      t0 = performance.now(); const kept = idx.filter((i) => re.test(names[i])); const scan = performance.now() - t0;
      return { ms, sort, scan, kept: kept.length };
    });
    out.ms.forEach((x, i) => page_ms[i].push(x));
    base.sort.push(out.sort); base.scan.push(out.scan);
    await page.close();
  }
  await browser.close();
  const bs = median(base.sort), bf = median(base.scan);
  console.log('dashboard, ' + runs + ' runs (fresh page each), median ms; baseline in the same pages: index sort ' +
              bs.toFixed(1) + ' ms, regex scan ' + bf.toFixed(1) + ' ms');
  let worst = 0;
  labels.forEach((l, i) => {
    const m = median(page_ms[i]), b = /^filter/.test(l) ? bf : bs;
    worst = Math.max(worst, m);
    console.log('  ' + l.padEnd(20) + m.toFixed(1).padStart(8) + ' ms  ' + (m / b).toFixed(2).padStart(6) + 'x its baseline');
  });
  console.log('slowest action: ' + worst.toFixed(1) + ' ms (target: 100 ms)');
})().catch((e) => { console.error(e); process.exit(1); });
