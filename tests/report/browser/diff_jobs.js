/* The page of two jobs compared rank by rank (gpuprof diff JOB_A JOB_B --html) in a real browser
 * (puppeteer-core, Debian's chromium), on OUTDIR/jobs.html made by browser_diff_jobs.sh: the
 * 8-rank job (base) against a copy whose rank 3 has its computation kernels twice as long
 * (OUTDIR/slow3). Checks (issue 33.3): one pair shown at a time, rank 0 first; each side's
 * "ran on" line (device, world size, rank) in the pair's page; the selector switches the pair
 * (its files, its lines, its regressions) and the address (#rank=N); the selector's labels name
 * the pair that changed; the page opened at #rank=5 shows pair 5; nothing fails in the console.
 * usage: node diff_jobs.js CHROMIUM OUTDIR. Prints ok/FAIL lines; exit 1 when a check failed. */
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
const url = (file) => 'file://' + path.resolve(outDir, file);

async function open(browser, hash, file) {
  const page = await browser.newPage();
  await page.setViewport({ width: 1280, height: 1000 });
  page.on('pageerror', (e) => check(false, 'page error ' + e.message));
  await page.goto(url(file || 'jobs.html') + (hash || ''));
  return page;
}

/* The pair shown: the visible sections' ranks, and what the shown iframe's page says. */
async function shown(page) {
  const ranks = await page.$$eval('.gp-pair', (s) =>
    s.filter((e) => !e.hidden && e.offsetParent !== null).map((e) => e.getAttribute('data-rank')));
  const out = { ranks, context: '', regressions: '', title: '' };
  if (ranks.length !== 1) return out;
  const el = await page.$('.gp-pair[data-rank="' + ranks[0] + '"] iframe');
  const frame = await el.contentFrame();
  await frame.waitForSelector('html[data-ready="1"]', { timeout: 60000 });
  Object.assign(out, await frame.evaluate(() => {
    const t = (sel) => { const e = document.querySelector(sel); return e ? e.innerText : ''; };
    return { context: t('#gp-diff-context'),
             regressions: t('#gp-regressions .gp-card-v'), title: document.body.innerText.slice(0, 600) };
  }));
  const box = await el.boundingBox();
  out.height = box ? box.height : 0;
  return out;
}

(async () => {
  const browser = await puppeteer.launch({
    executablePath: chrome, headless: 'new',
    args: ['--no-sandbox', '--disable-gpu', '--allow-file-access-from-files'],
  });
  try {
    let page = await open(browser);
    const options = await page.$$eval('#gp-rank option', (o) => o.map((e) => [e.value, e.textContent]));
    check(options.length === 8 && options.every((o, i) => o[0] === String(i)),
          'the selector lists the 8 rank pairs: ' + options.map((o) => o[0]).join(' '));
    const changed = options.filter((o) => !/ 0 regressions/.test(o[1])).map((o) => o[0]);
    check(changed.length === 1 && changed[0] === '3',
          'the labels name rank 3 as the pair with regressions: ' + options[3][1]);
    const a = await shown(page);
    check(a.ranks.length === 1 && a.ranks[0] === '0', 'one pair shown at first, rank 0: ' + a.ranks.join(','));
    check(/Base ran on: device Tesla V100-SXM2-32GB, world size 8, rank 0\b/.test(a.context) &&
          /Current ran on: device Tesla V100-SXM2-32GB, world size 8, rank 0\b/.test(a.context),
          'rank 0: each side\'s device, world size and rank: ' + a.context.replace(/\s+/g, ' '));
    check(/worker0_/.test(a.title) && !/slow3\/worker3_/.test(a.title), 'rank 0: the pair\'s files are rank 0\'s');
    check(a.regressions.replace(/\s/g, '') === '0+0', 'rank 0: no regressions (' + a.regressions + ')');
    check(a.height >= 600, 'the pair\'s page gets most of the window: ' + a.height + ' px');
    await shot(page, 'diff_jobs_rank0.png');

    await page.select('#gp-rank', '3');
    const b = await shown(page);
    check(b.ranks.length === 1 && b.ranks[0] === '3', 'after choosing rank 3, pair 3 alone is shown: ' + b.ranks.join(','));
    check(/Base ran on: device Tesla V100-SXM2-32GB, world size 8, rank 3\b/.test(b.context) &&
          /Current ran on: device Tesla V100-SXM2-32GB, world size 8, rank 3\b/.test(b.context),
          'rank 3: each side\'s device, world size and rank: ' + b.context.replace(/\s+/g, ' '));
    check(/slow3\/worker3_/.test(b.title), 'rank 3: the current side is the slowed rank 3\'s file');
    const reg = b.regressions.split('+').map((x) => parseInt(x, 10));
    check(reg.length === 2 && reg[0] + reg[1] > 0, 'rank 3: the regressions show (' + b.regressions + ')');
    check(/#rank=3$/.test(page.url()), 'the address follows the choice: ' + page.url());
    await shot(page, 'diff_jobs_rank3.png');
    await page.close();

    page = await open(browser, '#rank=5');
    const c = await shown(page);
    check(c.ranks.length === 1 && c.ranks[0] === '5' && /rank 5\b/.test(c.context) &&
          (await page.$eval('#gp-rank', (s) => s.value)) === '5',
          'opened at #rank=5: pair 5 shown and selected');
    await page.close();

    page = await open(browser, '', 'jobs_note.html');
    const d = await shown(page);
    const lay = await page.evaluate(() => {
      const n = document.querySelector('.gp-note'), f = document.querySelector('.gp-pair:not([hidden]) iframe');
      return { note: n ? n.textContent : '', options: document.querySelectorAll('#gp-rank option').length,
               scroll: document.scrollingElement.scrollHeight, inner: innerHeight,
               bottom: f ? f.getBoundingClientRect().bottom : 0 };
    });
    check(/rank 7 is only in the base job/.test(lay.note) && lay.options === 7,
          'a rank missing from the current job: the note (' + lay.note + ') and 7 pairs');
    check(d.ranks[0] === '0' && /rank 0\b/.test(d.context), 'with the note, pair 0 shown');
    check(lay.scroll <= lay.inner && Math.abs(lay.bottom - lay.inner) <= 2,
          'with the note, the outer page does not scroll (' + lay.scroll + ' px in ' + lay.inner +
          ') and the pair\'s page reaches the bottom (' + Math.round(lay.bottom) + ' px)');
    await shot(page, 'diff_jobs_note.png');
    await page.close();
  } catch (e) {
    check(false, 'exception: ' + (e && e.stack || e));
  } finally {
    await browser.close();
  }
  console.log(fails ? fails + ' check(s) failed' : 'all checks passed');
  process.exit(fails ? 1 : 0);
})();
