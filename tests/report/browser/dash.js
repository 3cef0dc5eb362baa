/* Browser interaction tests of the dashboard (gpuprof report), the ops page (gpuprof ops --html),
 * the compile pages and the profile server's pages (issue 36): puppeteer-core driving Debian's
 * chromium. browser_dash.sh writes the pages into OUTDIR; this script acts as a user and asserts
 * on what the page shows, and saves screenshots under OUTDIR/screenshots.
 * usage: node dash.js CHROMIUM OUTDIR [SERVE_URL]
 * Prints "ok: ..." / "FAIL: ..." lines; exit status 1 when a check failed. */
'use strict';
const puppeteer = require('puppeteer-core');
const fs = require('fs');
const path = require('path');

const [chrome, outDir, serveUrl] = process.argv.slice(2);
let fails = 0;
function check(cond, what) {
  console.log((cond ? 'ok: ' : 'FAIL: ') + what);
  if (!cond) fails++;
}
const have = (f) => fs.existsSync(path.join(outDir, f));
const url = (f) => 'file://' + path.resolve(outDir, f);
const shot = (page, name, full) =>
  page.screenshot({ path: path.join(outDir, 'screenshots', name), fullPage: !!full });

/* Opens a page and waits for it to mark itself drawn; static pages (ops, compile: noReady) once
 * loaded. */
async function open(browser, file, w, h, noReady) {
  const page = await browser.newPage();
  await page.setViewport({ width: w || 1400, height: h || 900 });
  page.on('pageerror', (e) => check(false, file + ': page error ' + e.message));
  await page.goto(/^https?:/.test(file) ? file : url(file), { waitUntil: 'load' });
  if (!noReady) await page.waitForSelector('html[data-ready="1"]', { timeout: 60000 });
  return page;
}

/* Text that runs past its box: for every table cell, list item and card of the page, the extent
 * of its text (a Range over its contents) must end inside its column (.gp-cols > div) or its
 * section; cells that clip their text (overflow hidden) and the scrolled table are their own
 * boxes. Returns the first offenders as strings. */
async function overprints(page) {
  return page.evaluate(() => {
    const bad = [];
    const els = document.querySelectorAll('main td, main th, main li, main .gp-card, main p');
    for (const el of els) {
      if (el.closest('.gp-vscroll, .gp-ops-wrap') || !el.offsetParent) continue;
      const box = el.closest('.gp-cols > div') || el.closest('section') || document.body;
      const br = box.getBoundingClientRect();
      const cs = getComputedStyle(el);
      let right;
      if (cs.overflowX !== 'visible') right = el.getBoundingClientRect().right;
      else {
        const r = document.createRange();
        r.selectNodeContents(el);
        right = r.getBoundingClientRect().right;
      }
      if (right > br.right + 1.5) bad.push(el.tagName + ' "' + el.textContent.trim().slice(0, 40) + '" ends at ' + Math.round(right) + ' past ' + Math.round(br.right));
    }
    const sw = document.documentElement.scrollWidth, vw = window.innerWidth;
    if (sw > vw + 1) bad.unshift('page ' + sw + ' px wide in a ' + vw + ' px window');
    return bad.slice(0, 4);
  });
}

/* The ops table's header texts, and the rows drawn (cells' text) */
async function opsTable(page) {
  return page.evaluate(() => {
    const t = document.getElementById('gp-ops');
    const heads = Array.from(t.tHead.rows[0].cells).map((c) => c.textContent.trim());
    const rows = Array.from(t.tBodies[0].rows).filter((r) => r.cells.length > 1)
      .map((r) => Array.from(r.cells).map((c) => c.getAttribute('data-v') || c.textContent));
    return { heads, rows, domRows: t.querySelectorAll('tbody tr').length };
  });
}

async function headIndex(page, name) {
  return page.evaluate((n) => Array.from(document.getElementById('gp-ops').tHead.rows[0].cells)
    .findIndex((c) => c.textContent.trim().replace(/[\u25b2\u25bc ]+$/, '') === n), name);
}

async function dashboardVit(browser) {
  const page = await open(browser, 'vit_report.html');
  const t = await opsTable(page);
  const ti = t.heads.findIndex((h) => /^total/.test(h)), si = t.heads.findIndex((h) => /^self/.test(h));
  check(ti >= 0 && si === ti + 1, 'dashboard: a self column beside total (' + t.heads.join(' | ') + ')');
  const share = t.heads.find((h) => /^share/.test(h)) || '';
  check(/^share of \S/.test(share), 'dashboard: the share says what it is of ("' + share + '")');
  /* tabs per kind, opening on ops and kernels: no Python frame among the rows */
  const tabs = await page.$$eval('#gp-ops-tabs [data-tab]', (b) => b.map((x) => [x.getAttribute('data-tab'), x.getAttribute('aria-selected'), +x.getAttribute('data-count')]));
  const sel = tabs.find((x) => x[1] === 'true');
  check(tabs.length >= 3 && sel && sel[0] === 'first', 'dashboard: tabs per kind, "ops & kernels" open (' + tabs.map((x) => x[0]).join(', ') + ')');
  const kinds = new Set(t.rows.map((r) => r[0]));
  check(kinds.size > 0 && !kinds.has('python_function') && [...kinds].every((k) => /^(cpu_op|kernel|gpu_memcpy|gpu_memset|range)$/.test(k)),
        'dashboard: the first tab holds ops and kernels only (' + [...kinds].join(', ') + ')');
  const py = tabs.find((x) => x[0] === 'python_function');
  if (py) {
    await page.click('#gp-ops-tabs [data-tab="python_function"]');
    const shown = await page.$eval('#gp-count', (e) => +e.getAttribute('data-shown'));
    const pk = new Set((await opsTable(page)).rows.map((r) => r[0]));
    check(shown === py[2] && pk.size === 1 && pk.has('python_function'), 'dashboard: the python_function tab shows its ' + shown + ' rows');
  } else check(false, 'dashboard: no python_function tab on a trace with Python frames');
  /* recursion-safe totals: sorted by total, the first row is at most the trace's span */
  await page.click('#gp-ops-tabs [data-tab="all"]').catch(() => check(false, 'dashboard: no "all" tab'));
  const wall = await page.$eval('#gp-where', (e) => +e.getAttribute('data-wall'));
  const ci = await headIndex(page, 'total');
  await page.evaluate((c) => document.getElementById('gp-ops').tHead.rows[0].cells[c].click(), ci);
  const sorted = await page.$eval('#gp-ops', (e) => e.getAttribute('data-sort'));
  if (!/desc/.test(sorted)) await page.evaluate((c) => document.getElementById('gp-ops').tHead.rows[0].cells[c].click(), ci);
  const top = (await opsTable(page)).rows[0];
  check(top && +top[ci] <= wall, 'dashboard: the largest total (' + (top && top[1]).slice(0, 50) + ' ' + (top && top[ci]) + ' ns) is within the span ' + wall + ' ns');
  const arrow = await page.evaluate((c) => getComputedStyle(document.getElementById('gp-ops').tHead.rows[0].cells[c], '::after').content, ci);
  check(/\u25bc|\u25b2/.test(arrow), 'dashboard: the sorted column shows an arrow (' + arrow + ')');
  /* full kernel names in the captions of the top-operations chart */
  const caps = await page.$$eval('#gp-op-bars td.gp-name', (c) => c.map((x) => [x.textContent, x.title]));
  check(caps.length > 0 && caps.every((c) => c[0] === c[1]), 'dashboard: the top-operations captions are the full names (' + (caps.find((c) => c[0] !== c[1]) || ['all'])[0].slice(0, 50) + ')');
  const li = await page.$$eval('#gp-top .gp-name', (c) => c.map((x) => [x.textContent, x.title]));
  check(li.length > 0 && li.every((c) => c[0] === c[1]), 'dashboard: the bottleneck list names in full');
  await page.close();
}

async function dashboardScale(browser) {
  const page = await open(browser, 'big_report.html');
  const n = await page.$eval('#gp-ops', (e) => +e.getAttribute('data-rows'));
  const t = await opsTable(page);
  check(n > 100000 && t.domRows < 300, 'dashboard: ' + n + ' operations, ' + t.domRows + ' rows in the DOM (only those in view)');
  /* a sort and a filter of 100K rows, as the user clicks and types (ms from the event to the
   * table redrawn, synchronously) */
  const ms = await page.evaluate(() => {
    const th = document.getElementById('gp-ops').tHead.rows[0].cells, out = [];
    for (const c of [2, 3, 1, 4]) { const t0 = performance.now(); th[c].click(); out.push(performance.now() - t0); }
    const f = document.getElementById('gp-filter');
    for (const v of ['op_0', 'op_01234', '']) {
      const t0 = performance.now(); f.value = v; f.dispatchEvent(new Event('input')); out.push(performance.now() - t0);
    }
    return out.map((x) => Math.round(x));
  });
  /* printed, not asserted: a test's wall time on a shared machine says nothing (the timing is
   * bench/report/dash_sort.sh, with its baseline in the same run) */
  console.log('measure: dashboard 100K rows, sort/filter ms: ' + ms.join(' '));
  /* each sort orders the rows: the rows drawn after a click are in the column's order */
  for (const [c, numeric] of [[3, true], [2, true], [1, false]]) {
    await page.evaluate((i) => document.getElementById('gp-ops').tHead.rows[0].cells[i].click(), c);
    const dir = await page.$eval('#gp-ops', (e) => e.getAttribute('data-sort'));
    const v = (await opsTable(page)).rows.map((r) => (numeric ? +r[c] : r[c].toLowerCase()));
    const desc = /desc$/.test(dir);
    const bad = v.findIndex((x, i) => i > 0 && (desc ? v[i - 1] < x : v[i - 1] > x));
    check(dir.startsWith(c + ':') && v.length >= 20 && bad < 0,
          'dashboard: sorted by column ' + c + ' (' + dir + '), ' + v.length + ' rows drawn in order' +
          (bad < 0 ? '' : ' (row ' + bad + ': ' + v[bad - 1] + ' then ' + v[bad] + ')'));
  }
  await page.type('#gp-filter', 'op_01234');
  const shown = await page.$eval('#gp-count', (e) => [e.getAttribute('data-shown'), e.textContent]);
  check(shown[0] === '10', 'dashboard: filter op_01234 shows 10 rows (' + shown[1] + ')');
  await page.evaluate(() => { const f = document.getElementById('gp-filter'); f.value = 'aten::hot'; f.dispatchEvent(new Event('input')); });
  const hot = (await opsTable(page)).rows[0];
  const calls = await page.evaluate(() => document.querySelector('#gp-ops tbody tr:not(.gp-spacer) td:nth-child(3)').textContent);
  check(hot && calls === '1,500', 'dashboard: calls with thousands separators (' + calls + ')');
  const cards = await page.$$eval('#gp-operations .gp-card-v, #gp-unique .gp-card-v', (c) => c.map((x) => x.textContent));
  check(cards.length === 2 && cards.every((c) => /^\d{1,3}(,\d{3})+$/.test(c)), 'dashboard: operation counts with separators (' + cards.join(', ') + ')');
  const tabText = await page.$eval('#gp-ops-tabs [data-tab="all"]', (e) => e.textContent);
  check(/100,00\d/.test(tabText), 'dashboard: tab counts with separators (' + tabText + ')');
  /* scrolling draws the rows further down */
  await page.evaluate(() => { const f = document.getElementById('gp-filter'); f.value = ''; f.dispatchEvent(new Event('input')); });
  await page.evaluate(() => { const s = document.getElementById('gp-ops-scroll'); s.scrollTop = s.scrollHeight / 2; });
  await new Promise((r) => setTimeout(r, 300));
  const mid = await page.evaluate(() => { const s = document.getElementById('gp-ops-scroll').getBoundingClientRect(); const e = document.elementFromPoint(s.left + 150, s.top + s.height / 2); return e ? e.textContent : ''; });
  check(/^op_\d{6}$|^aten::hot$/.test(mid), 'dashboard: scrolled half-way, a row is drawn in view (' + mid + ')');
  /* the profiler's own thread and the step named as in the trace */
  const labels = await page.$$eval('#gp-cpu-parts .gp-plabel', (c) => c.map((x) => x.textContent));
  check(labels.some((l) => /profiler's own thread: Buffer Flush/.test(l)), 'dashboard: the Buffer Flush thread is labelled as the profiler\'s (' + labels.join(', ') + ')');
  const steps = await page.$$eval('#gp-steps .gp-plabel', (c) => c.map((x) => x.textContent));
  check(steps.length === 1 && steps[0] === 'ProfilerStep#550', 'dashboard: the step named as in the trace (' + steps.join(', ') + ')');
  await page.close();
}

/* The ops page of modern_h100_timesformer (gpuprof ops --html; opsCsvRows: the rows of ops --csv) */
async function opsPage(browser) {
  const page = await open(browser, 'tf_ops.html', 1400, 900, true);
  const title = await page.title();
  check(/modern_h100_timesformer/.test(title) && /H100/.test(title), 'ops page: titled with the trace and device (' + title + ')');
  const h1 = await page.$eval('h1', (e) => e.textContent).catch(() => '');
  const font = await page.evaluate(() => getComputedStyle(document.body).fontFamily);
  check(/modern_h100_timesformer/.test(h1) && /DejaVu Sans/.test(font), 'ops page: styled as the other pages (heading "' + h1.slice(-40) + '", font ' + font + ')');
  const want = +fs.readFileSync(path.join(outDir, 'tf_ops.rows'), 'utf8');
  const rows = await page.$$eval('#ops tbody tr', (r) => r.length);
  const cnt = await page.$eval('#ops .gp-ops-count', (e) => [e.getAttribute('data-shown'), e.textContent]).catch(() => [null, 'none']);
  check(rows === want && cnt[0] === String(want), 'ops page: every row (' + rows + ' of ops --csv\'s ' + want + '), counted (' + cnt[1] + ')');
  await page.type('#ops input[type=search]', 'softmax');
  const cnt2 = await page.$eval('#ops .gp-ops-count', (e) => [e.getAttribute('data-shown'), e.textContent]).catch(() => [null, 'none']);
  const vis = await page.$$eval('#ops tbody tr', (r) => r.filter((x) => x.style.display !== 'none').length);
  check(cnt2[0] === String(vis) && vis > 0 && vis < rows, 'ops page: the filter counts what it shows (' + cnt2[1] + ')');
  await page.evaluate(() => { const f = document.querySelector('#ops input[type=search]'); f.value = ''; f.dispatchEvent(new Event('input')); });
  /* sorting by TFLOP/s both ways: an arrow on the header, rows without a model last */
  const col = await page.$$eval('#ops thead th', (h) => h.findIndex((x) => x.textContent.replace(/[\u25b2\u25bc ]+$/, '') === 'TFLOP/s'));
  for (const dir of ['first', 'second']) {
    await page.evaluate((c) => document.querySelectorAll('#ops thead th')[c].click(), col);
    const st = await page.evaluate((c) => {
      const th = document.querySelectorAll('#ops thead th')[c];
      const v = Array.from(document.querySelectorAll('#ops tbody tr')).map((r) => +r.cells[c].getAttribute('data-v'));
      const firstNone = v.findIndex((x) => x < 0);
      return { arrow: getComputedStyle(th, '::after').content, lastOk: firstNone < 0 || v.slice(firstNone).every((x) => x < 0), firstNone, n: v.length };
    }, col);
    check(/\u25b2|\u25bc/.test(st.arrow) && st.lastOk && st.firstNone > 0, 'ops page: sorted by TFLOP/s (' + dir + ' click) with an arrow (' + st.arrow + '), unmodelled rows last (from row ' + st.firstNone + ' of ' + st.n + ')');
  }
  /* the roofline: leaf ops only, one bubble per table row at most, none clamped onto an axis */
  const pts = await page.$$eval('#ops svg.gp-roofline circle', (c) => c.map((x) => ({ key: x.getAttribute('data-key') || x.textContent.split(' ')[0], cx: +x.getAttribute('cx'), cy: +x.getAttribute('cy') })));
  const keys = new Set(pts.map((p) => p.key));
  const doubles = [['aten::softmax', 'aten::_softmax'], ['aten::linear', 'aten::addmm'], ['aten::matmul', 'aten::bmm'], ['aten::conv2d', 'aten::convolution'], ['aten::layer_norm', 'aten::native_layer_norm']].filter((d) => keys.has(d[0]) && keys.has(d[1]));
  check(pts.length > 0 && pts.length === keys.size && doubles.length === 0, 'ops page: ' + pts.length + ' bubbles, leaf ops only (' + (doubles.map((d) => d.join(' + ')).join(', ') || 'no parent drawn with its child') + ')');
  const axis = await page.evaluate(() => { const l = document.querySelectorAll('#ops svg.gp-roofline line.g'); let x0 = 1e9, y1 = 0; l.forEach((e) => { x0 = Math.min(x0, +e.getAttribute('x1')); y1 = Math.max(y1, +e.getAttribute('y2')); }); return { x0, y1 }; });
  const onAxis = pts.filter((p) => Math.abs(p.cy - axis.y1) < 0.6 || Math.abs(p.cx - axis.x0) < 0.6);
  check(onAxis.length === 0, 'ops page: no point clamped onto an axis (' + (onAxis.map((p) => p.key).join(', ') || 'none') + ')');
  await page.close();
}

/* gpuprof compile --html of a multi-rank log folder (cc_multi.html) and of comp_metrics.log
 * (cc_metrics.html): the log named in the title and heading, every artifact opened without
 * widening the page, durations in µs as on the other pages */
async function compilePages(browser) {
  for (const [f, log] of [['cc_multi.html', 'multi_rank_logs'], ['cc_metrics.html', 'comp_metrics.log']]) {
    if (!have(f)) continue;
    const page = await open(browser, f, 1280, 900, true);
    const title = await page.title(), h1 = await page.$eval('h1', (e) => e.textContent);
    check(title.includes(log) && h1.includes(log), 'compile page ' + log + ': title and heading name the log ("' + title + '")');
    const wide = await page.evaluate(() => {
      let w = document.documentElement.scrollWidth, which = '', n = 0;
      document.querySelectorAll('details').forEach((d) => {
        d.open = true; n++;
        const sw = document.documentElement.scrollWidth;
        if (sw > w) { w = sw; which = d.querySelector('summary').textContent; }
        d.open = false;
      });
      return { w, which, n };
    });
    check(wide.n > 0 && wide.w <= 1280, 'compile page ' + log + ': opening each of ' + wide.n + ' artifacts keeps the page ' + wide.w + ' px wide' + (wide.which ? ' (widest: ' + wide.which + ')' : ''));
    const text = await page.evaluate(() => document.body.innerText);
    const us = text.match(/\d us\b/g) || [];
    check(us.length === 0 && /\u00b5s|ms\b/.test(text), 'compile page ' + log + ': durations written in \u00b5s (' + us.length + ' "us")');
    if (f === 'cc_multi.html') await shot(page, 'compile_multi_1280.png');
    await page.close();
  }
}

/* gpuprof serve on vit.json.gz and compiled.json.gz (a torch.compile trace): the index's headline
 * figures (as the dashboard's), the compile page linked for the trace with compiled regions only,
 * the ops page at /ops/NAME, and the icon */
async function served(browser) {
  const page = await open(browser, serveUrl + '/', 1400, 900, true);
  /* the first request queues the figures for the server's worker: reload until they are there */
  for (let i = 0; i < 100; i++) {
    const known = await page.$$eval('#gp-profiles td[data-v]', (c) => c.length);
    if (known >= 4) break;
    await new Promise((r) => setTimeout(r, 200));
    await page.reload();
  }
  const icon = await page.$eval('link[rel=icon]', (e) => e.href).catch(() => null);
  const fav = await page.evaluate(async (u) => { const r = await fetch(u + '/favicon.ico'); return [r.status, r.headers.get('content-type'), (await r.text()).slice(0, 4)]; }, serveUrl);
  check(icon && fav[0] === 200 && /svg/.test(fav[1]) && fav[2] === '<svg', 'serve: a favicon (' + fav.join(' ') + ')');
  const rows = await page.$$eval('#gp-profiles tr', (tr) => tr.slice(1).map((r) => ({
    name: r.cells[0].textContent, text: Array.from(r.cells).map((c) => c.textContent),
    span: r.cells[3] && r.cells[3].getAttribute('data-v'), html: r.innerHTML })));
  const heads = await page.$$eval('#gp-profiles th', (h) => h.map((x) => x.textContent));
  check(['span', 'GPU busy', 'device'].every((h) => heads.includes(h)), 'serve: the index has span, GPU busy and device columns (' + heads.join(', ') + ')');
  const vit = rows.find((r) => r.name.startsWith('vit')), cc = rows.find((r) => r.name.startsWith('compiled'));
  const wall = fs.existsSync(path.join(outDir, 'vit_report.html')) ? /id="gp-where" data-wall="(\d+)"/.exec(fs.readFileSync(path.join(outDir, 'vit_report.html'), 'utf8')) : null;
  check(vit && wall && vit.span === wall[1] && /H100/.test(vit.text[5]), 'serve: vit\'s span ' + (vit && vit.span) + ' ns as the dashboard\'s ' + (wall && wall[1]) + ', device ' + (vit && vit.text[5]));
  const busy = /id="gp-gpu-busy"><div class="gp-card-v">([^<]*)</.exec(fs.readFileSync(path.join(outDir, 'compiled_report.html'), 'utf8'));
  check(cc && busy && cc.text[4] === busy[1], 'serve: GPU busy of the compiled trace ' + (cc && cc.text[4]) + ' as its dashboard card ' + (busy && busy[1]));
  check(cc && /href="\/compile\/compiled\.json\.gz"/.test(cc.html) && vit && !/href="\/compile\//.test(vit.html),
        'serve: the compile page linked for the trace with compiled regions only');
  /* the figures are cached: the same on a second request */
  await page.reload();
  const again = await page.$$eval('#gp-profiles tr', (tr) => tr.slice(1).map((r) => Array.from(r.cells).slice(3, 6).map((c) => c.textContent).join('|')));
  check(JSON.stringify(again) === JSON.stringify(rows.map((r) => r.text.slice(3, 6).join('|'))), 'serve: the same figures on a second request');
  await page.close();
  const ops = await browser.newPage();
  const resp = await ops.goto(serveUrl + '/ops/vit.json.gz');
  const t = await ops.title();
  check(resp.status() === 200 && /vit\.json\.gz/.test(t) && /H100/.test(t) && (await ops.$$('#ops tbody tr')).length > 5,
        'serve: /ops/NAME is the ops page (' + resp.status() + ', "' + t + '")');
  const link = await ops.$eval('#gp-serve-nav', (e) => e.innerHTML).catch(() => '');
  check(/href="\/"/.test(link), 'serve: the ops page carries the navigation bar back to the index');
  await ops.close();
}

/* The headline finding names its ranks on a job, and whose figures it quotes; one trace: no ranks. */
async function causeRanks(browser) {
  for (const [f, job] of [['dlrm_report.html', true], ['tf_report.html', false]]) {
    if (!have(f)) continue;
    const page = await open(browser, f, 1280, 900);
    const who = await page.$eval('#gp-cause-ranks', (e) => e.textContent).catch(() => null);
    if (job) check(/^ranks 0\u20137 \(evidence: rank [0-7], the worst\)$/.test(who || ''), 'job report: the headline finding names its ranks and whose evidence it quotes ("' + who + '")');
    else check(who === null, 'one-trace report: the headline finding names no rank');
    await page.close();
  }
}

async function layout(browser, file, name) {
  for (const w of [1280, 1366, 1600]) {
    const page = await open(browser, file, w, 900, /_ops\.html$/.test(file));
    const bad = await overprints(page);
    check(bad.length === 0, name + ' at ' + w + ' px: no text past its column' + (bad.length ? ' (' + bad.join('; ') + ')' : ''));
    /* The ops table fits its box, and an Input Dims cell wraps between shapes, never inside
     * one: no more lines than shapes (the cell "[[8,12,64,3137],[8,12,64,3137],[]]" once took 4
     * lines, a lone "," among them). */
    const ops = await page.evaluate(() => {
      const wraps = Array.from(document.querySelectorAll('.gp-ops-wrap')).map((e) => [e.scrollWidth, e.clientWidth]);
      let cells = 0, split = [];
      for (const td of document.querySelectorAll('.gp-ops td.s')) {
        if (!td.offsetParent || !td.textContent) continue;
        cells++;
        const r = document.createRange();
        r.selectNodeContents(td);
        const lines = new Set(Array.from(r.getClientRects()).filter((q) => q.width > 0).map((q) => Math.round(q.top))).size;
        const shapes = td.textContent.split('],').length;
        if (lines > shapes) split.push(td.textContent + ' on ' + lines + ' lines');
      }
      /* a name wraps after a separator ("::", "_", "<", ",", ".", "/") or a blank, not inside a word */
      let names = 0, bad = [];
      for (const td of document.querySelectorAll('.gp-ops td.k')) {
        if (!td.offsetParent || td.getClientRects()[0].height < 20) continue;
        const text = td.textContent;
        const node = document.createTreeWalker(td, NodeFilter.SHOW_TEXT);
        let prevTop = null, prevChar = '';
        names++;
        for (let n = node.nextNode(); n; n = node.nextNode()) {
          for (let k = 0; k < n.length; k++) {
            const r = document.createRange();
            r.setStart(n, k);
            r.setEnd(n, k + 1);
            const top = Math.round(r.getBoundingClientRect().top);
            if (prevTop !== null && top > prevTop + 2 && !':_<,./ '.includes(prevChar)) bad.push(text + ' (after "' + prevChar + '")');
            prevTop = top;
            prevChar = n.data[k];
          }
        }
      }
      return { wraps, cells, split: split.slice(0, 3), names, bad: bad.slice(0, 3) };
    });
    if (ops.wraps.length) {
      check(ops.wraps.every(([sw, cw]) => sw <= cw + 1), name + ' at ' + w + ' px: the ops table fits its box (' + JSON.stringify(ops.wraps) + ')');
      check(ops.bad.length === 0, name + ' at ' + w + ' px: ' + ops.names + ' wrapped names wrap after a separator only' + (ops.bad.length ? ' (' + ops.bad.join('; ') + ')' : ''));
      check(ops.split.length === 0, name + ' at ' + w + ' px: ' + ops.cells + ' Input Dims cells wrap between shapes only' + (ops.split.length ? ' (' + ops.split.join('; ') + ')' : ''));
    }
    if (w !== 1366) await shot(page, name + '_' + w + '.png', true);
    await page.close();
  }
}

(async () => {
  const browser = await puppeteer.launch({ executablePath: chrome, headless: true,
    args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--no-first-run'] });
  try {
    const parts = [
      ['vit_report.html', dashboardVit],
      ['big_report.html', dashboardScale],
      ['tf_report.html', (b) => layout(b, 'tf_report.html', 'dashboard_timesformer')],
      ['dlrm_report.html', (b) => layout(b, 'dlrm_report.html', 'dashboard_dlrm8')],
      ['dlrm_report.html', causeRanks],
      ['tf_ops.html', opsPage],
      ['cc_metrics.html', compilePages],
      ['tf_ops.html', (b) => layout(b, 'tf_ops.html', 'ops_timesformer')],
      ['dlrm_ops.html', (b) => layout(b, 'dlrm_ops.html', 'ops_dlrm8')],
    ];
    if (serveUrl) parts.push(['vit_report.html', served]);
    for (const [f, fn] of parts) {
      if (!have(f)) { console.log('skip: ' + f + ' absent'); continue; }
      try { await fn(browser); } catch (e) { check(false, f + ': ' + e.message); }
    }
  } finally {
    await browser.close();
  }
  process.exit(fails ? 1 : 0);
})();
