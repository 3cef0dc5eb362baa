/* The timeline's critical-path overlay in a real browser (puppeteer-core, Debian's chromium):
 * OUTDIR/tf_cp.html (gpuprof timeline --critical-path on modern_h100_timesformer, made by
 * browser_timeline_cp.sh) has the overlay on: the toggle is checked, path events are drawn
 * outlined, the legend shows the path length of `gpuprof analyze` (OUTDIR/tf_cp_analysis.json);
 * toggled off, no outline is drawn and the legend hides; toggled on again, they come back.
 * usage: node timeline_cp.js CHROMIUM OUTDIR. Prints ok/FAIL lines; exit 1 when a check failed. */
'use strict';
const puppeteer = require('puppeteer-core');
const path = require('path');
const fs = require('fs');

const [chrome, outDir] = process.argv.slice(2);
let fails = 0;
function check(cond, what) {
  console.log((cond ? 'ok: ' : 'FAIL: ') + what);
  if (!cond) fails++;
}

/* Pixels of the canvas in the overlay's outline colour (#d0009c). */
function magenta(page) {
  return page.evaluate(() => {
    const c = document.querySelector('#gp-tl canvas'), d = c.getContext('2d').getImageData(0, 0, c.width, c.height).data;
    let n = 0;
    for (let i = 0; i < d.length; i += 4)
      if (Math.abs(d[i] - 0xd0) < 12 && d[i + 1] < 12 && Math.abs(d[i + 2] - 0x9c) < 12) n++;
    return n;
  });
}

async function run(browser) {
  const an = JSON.parse(fs.readFileSync(path.join(outDir, 'tf_cp_analysis.json'), 'utf8'));
  const paths = (an.critical_path || []).filter((p) => p.valid);
  const want = paths.reduce((s, p) => s + p.length_ns, 0);
  check(paths.length > 0 && want > 0, 'analyze finds ' + paths.length + ' critical path(s), ' + want + ' ns');
  const page = await browser.newPage();
  await page.setViewport({ width: 1400, height: 900 });
  page.on('pageerror', (e) => check(false, 'page error ' + e.message));
  await page.goto('file://' + path.resolve(outDir, 'tf_cp.html'));
  await page.waitForSelector('html[data-ready="1"]', { timeout: 60000 });
  const st = () => page.evaluate(() => {
    const el = document.getElementById('gp-tl'), lg = document.getElementById('gp-tl-cp-legend');
    const cb = document.getElementById('gp-tl-cp');
    return { on: el.getAttribute('data-cp-on'), shown: +el.getAttribute('data-cp-shown'),
             checked: cb ? cb.checked : null, legend: lg ? lg.textContent : null,
             legendShown: lg ? getComputedStyle(lg).display !== 'none' : false,
             len: lg ? lg.querySelector('[data-length-ns]').getAttribute('data-length-ns') : null };
  });
  const a = await st();
  check(a.checked === true && a.on === '1', 'the overlay is on when computed (toggle checked)');
  check(a.shown > 0, 'path events drawn highlighted: ' + a.shown);
  const ma = await magenta(page);
  check(ma > 100, 'outlines on the canvas: ' + ma + ' px');
  check(a.legendShown && +a.len === want, 'the legend holds the path length ' + a.len + ' ns (analyze: ' + want + ')');
  check(/critical path \d+(\.\d+)? m?s/.test(a.legend || '') && /cpu_bound \d+\.\d%/.test(a.legend || ''),
        'the legend says the length and the class split: ' + (a.legend || '').trim());
  await page.screenshot({ path: path.join(outDir, 'screenshots', 'tf_cp_on.png') });

  await page.click('#gp-tl-cp');
  const b = await st(), mb = await magenta(page);
  check(b.on === '0' && !b.legendShown, 'toggled off: overlay off, legend hidden');
  check(mb < ma / 20, 'toggled off: no outlines (' + mb + ' px)');
  await page.screenshot({ path: path.join(outDir, 'screenshots', 'tf_cp_off.png') });

  await page.click('#gp-tl-cp');
  const c = await st(), mc = await magenta(page);
  check(c.on === '1' && c.legendShown && c.shown === a.shown && mc === ma, 'toggled on again: the same overlay');
  await page.close();
}

(async () => {
  const browser = await puppeteer.launch({
    executablePath: chrome, headless: true,
    args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--no-first-run'],
  });
  try { await run(browser); } catch (e) { check(false, 'timeline_cp: ' + e.message); }
  finally { await browser.close(); }
  console.log(fails ? fails + ' check(s) failed' : 'all critical-path overlay checks passed');
  process.exit(fails ? 1 : 0);
})();
