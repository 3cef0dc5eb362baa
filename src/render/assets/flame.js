/* gpuprof flame graph: click to zoom, regex search with match percentage, hover details, and the
 * view state (zoomed frame, search) kept in the URL fragment: #f=12&s=conv. Works both inside the
 * HTML page and inside a standalone SVG. Geometry at full width comes from C; only zoom rescales. */
(function () {
  'use strict';
  var D = (typeof GP_FLAME !== 'undefined') ? GP_FLAME
        : JSON.parse(document.getElementById('gp-data').textContent);
  var F = D.frames, N = D.names, W = D.width, PAD = 10, CHAR = 7;
  var n = F.length;
  var groups = new Array(n), rects = new Array(n), texts = new Array(n), fills = new Array(n);
  var gs = document.querySelectorAll('#gp-frames g.f');
  for (var k = 0; k < gs.length; k++) {
    var g = gs[k], i = +g.getAttribute('data-i');
    groups[i] = g;
    rects[i] = g.querySelector('rect');
    texts[i] = g.querySelector('text');
    fills[i] = rects[i].getAttribute('fill');
  }
  var details = document.getElementById('gp-details');
  var matchedEl = document.getElementById('gp-matched');
  var input = document.getElementById('gp-search-input');
  var zoomed = 0, term = '';

  function fmt(ns) {
    var a = Math.abs(ns);
    if (a >= 1e9) return (ns / 1e9).toFixed(3) + ' s';
    if (a >= 1e6) return (ns / 1e6).toFixed(3) + ' ms';
    if (a >= 1e3) return (ns / 1e3).toFixed(3) + ' us';
    return ns + ' ns';
  }
  function label(i, w) {
    var fit = Math.floor((w - 6) / CHAR), s = N[i];
    if (fit < 3) return '';
    return s.length <= fit ? s : s.slice(0, fit - 2) + '..';
  }
  function describe(i) {
    var f = F[i], root = F[0][3];
    var s = N[i] + '  total ' + fmt(f[3]) + ' (' + (100 * f[3] / root).toFixed(2) + '%)  self ' + fmt(f[4]);
    if (D.diff) {
      var d = f[3] - f[5];
      s += '  base ' + fmt(f[5]) + '  change ' + (d >= 0 ? '+' : '') + fmt(d) +
           (f[5] > 0 ? ' (' + (d >= 0 ? '+' : '') + (100 * d / f[5]).toFixed(1) + '%)' : ' (new)');
    }
    return s;
  }
  function saveState() {
    var parts = [];
    if (zoomed) parts.push('f=' + zoomed);
    if (term) parts.push('s=' + encodeURIComponent(term));
    var h = parts.length ? '#' + parts.join('&') : '';
    try { history.replaceState(null, '', h || location.pathname + location.search); } catch (e) { /* file: quirks */ }
  }
  function zoom(z) {
    if (!(z >= 0 && z < n)) z = 0;
    zoomed = z;
    var zf = F[z], zx = zf[2], zw = zf[3], zd = zf[1], scale = (W - 2 * PAD) / zw;
    for (var i = 0; i < n; i++) {
      var f = F[i], g = groups[i];
      if (!g) continue;
      var inside = f[1] >= zd && f[2] >= zx && f[2] + f[3] <= zx + zw;
      var above = f[1] < zd && f[2] <= zx && f[2] + f[3] >= zx + zw;
      if (!inside && !above) { g.style.display = 'none'; continue; }
      g.style.display = '';
      var x = inside ? PAD + (f[2] - zx) * scale : PAD, w = inside ? f[3] * scale : W - 2 * PAD;
      rects[i].setAttribute('x', x.toFixed(1));
      rects[i].setAttribute('width', w.toFixed(1));
      texts[i].setAttribute('x', (x + 3).toFixed(1));
      texts[i].textContent = label(i, w);
      if (above) g.classList.add('parent'); else g.classList.remove('parent');
    }
    saveState();
  }
  function search(t) {
    term = t || '';
    var re = null;
    if (term) { try { re = new RegExp(term); } catch (e) { re = null; } }
    var hit = new Array(n), under = new Array(n), sum = 0, count = 0;
    for (var i = 0; i < n; i++) {
      hit[i] = !!(re && re.test(N[i]));
      var p = F[i][0], pu = i ? under[p] : false;
      under[i] = hit[i] || pu;
      if (hit[i]) { count++; if (!pu) sum += F[i][3]; }
      if (rects[i]) rects[i].setAttribute('fill', hit[i] ? 'rgb(230,0,230)' : fills[i]);
    }
    var pct = re && F[0][3] > 0 ? 100 * sum / F[0][3] : 0;
    if (matchedEl) {
      matchedEl.textContent = re ? 'Matched: ' + pct.toFixed(1) + '% (' + count + ' frames)' : '';
      matchedEl.setAttribute('data-pct', re ? pct.toFixed(1) : '');
      matchedEl.setAttribute('data-count', re ? String(count) : '');
    }
    if (input && input.value !== term) input.value = term;
    saveState();
  }
  function frameOf(ev) {
    var g = ev.target.closest ? ev.target.closest('g.f') : null;
    return g ? +g.getAttribute('data-i') : -1;
  }
  var frames = document.getElementById('gp-frames');
  frames.addEventListener('click', function (ev) {
    var i = frameOf(ev);
    if (i >= 0) zoom(i);
  });
  frames.addEventListener('mouseover', function (ev) {
    var i = frameOf(ev);
    if (i >= 0 && details) details.textContent = describe(i);
  });
  var reset = document.getElementById('gp-reset');
  if (reset) reset.addEventListener('click', function () { zoom(0); });
  if (input) input.addEventListener('input', function () { search(input.value); });
  var sbtn = document.getElementById('gp-search');
  if (sbtn) sbtn.addEventListener('click', function () {
    var t = prompt('Search (regular expression)', term);
    if (t !== null) search(t);
  });
  function fromHash() {
    var h = location.hash.replace(/^#/, ''), st = {};
    h.split('&').forEach(function (kv) {
      var j = kv.indexOf('=');
      if (j > 0) st[kv.slice(0, j)] = decodeURIComponent(kv.slice(j + 1));
    });
    zoom(st.f ? parseInt(st.f, 10) : 0);
    search(st.s || '');
  }
  fromHash();
  window.addEventListener('hashchange', fromHash);
  var root = document.getElementById('gp-flame');
  root.setAttribute('data-ready', '1');
  document.documentElement.setAttribute('data-ready', '1');
})();
