/* gpuprof flame.html: the frame tree (made by flame_render.c: every node, in tree order, as
 * [parent, total, self, base_total, name, colour]) drawn on a canvas as wide as the window, root
 * at the top. Views, as speedscope has them: "flame" (children by name: the button says so, the
 * tree holds no time order), "left heavy" (children by weight, heaviest first), "sandwich" (the
 * callers and the callees of one name) and "self time" (a table per name). "merge numbered
 * instances" merges sibling frames whose names differ only by an instance number (nn.Module:
 * Linear_3, ProfilerStep#550) or an object address (at 0x7f..). "fold single-child Python frames"
 * (on by default where the tree has Python frames, D.py) leaves out the Python frames with one
 * child. The status line (#gp-status, in the subtitle) names the view and the frames shown.
 * Click a frame to zoom (click the root or Reset to come back), hover for its figures, search
 * with a regular expression. A page that also holds the module tree (D.alt, made by flame_render.c
 * with the input's nn.Module frames) has a "Frames" switch: call stacks or nn.Module, every view
 * then working on the chosen tree. State in the URL fragment: #v=left&f=12&s=gemm&m=1&n=NAME&b=module&p=1 (p: not folded). */
(function () {
  'use strict';
  var D = JSON.parse(document.getElementById('gp-data').textContent);
  var ROW = 17, PAD = 10;
  var host = document.getElementById('gp-flame'), details = document.getElementById('gp-details');
  var matchedEl = document.getElementById('gp-matched'), input = document.getElementById('gp-search-input');
  var mergeBox = document.getElementById('gp-merge'), tableEl = document.getElementById('gp-table');
  var primaryBy = D.by || 'stack';
  var foldBox = document.getElementById('gp-fold');
  var state = { view: 'flame', zoom: 0, term: '', merge: false, name: '', by: primaryBy, fold: !!foldBox };
  var VIEW_NAMES = { flame: 'flame by name', left: 'left heavy', sandwich: 'sandwich', table: 'self time table' };
  var T = null, re = null;
  var subMain = document.querySelector('.gp-sub'), subAlt = D.alt ? mk('p', 'gp-sub', D.alt.sub) : null;
  var statusEl = mk('span', 'gp-status');
  statusEl.id = 'gp-status';

  function fmt(ns) {
    var a = Math.abs(ns), u = [[1e9, 's'], [1e6, 'ms'], [1e3, '\u00b5s']];
    for (var k = 0; k < 3; k++) if (a >= u[k][0]) return (ns / u[k][0]).toFixed(3).replace(/\.?0+$/, '') + ' ' + u[k][1];
    return ns + ' ns';
  }
  function mk(tag, cls, text) {
    var e = document.createElement(tag);
    if (cls) e.className = cls;
    if (text !== undefined) e.textContent = text;
    return e;
  }
  function key(s, mod) {
    if (mod) return s.replace(/^(.+?)_\d+$/, '$1'); /* module frames: "Linear_3" */
    return s.replace(/^(nn\.Module: .*?)_\d+$/, '$1').replace(/ at 0x[0-9a-fA-F]+>$/, '>')
      .replace(/^(.+?)#\d+$/, '$1'); /* "ProfilerStep#550" */
  }

  /* A tree as arrays: name, total, self, base, colour, parent, children, depth. merge: siblings
   * with the same key() become one frame (their subtrees merged). fold: a Python frame (S.py)
   * with exactly one child is left out, its child taking its place (its self weight goes to its
   * parent), so deep Python stacks do not push the ops and kernels off the first screen. */
  function tree(merge, S, fold) {
    var F = S.frames, n = F.length / 6, t = { nm: [], tot: [], slf: [], bas: [], col: [], par: [], kids: [], dep: [] };
    var idx = new Int32Array(n), look = {}, mod = (S === D ? primaryBy : S.by) === 'module';
    var skip = new Uint8Array(n);
    if (fold && S.py && S.py.length) {
      var nk = new Int32Array(n);
      for (var c = 1; c < n; c++) nk[F[c * 6]]++;
      S.py.forEach(function (q) { if (q > 0 && nk[q] === 1) skip[q] = 1; });
    }
    for (var i = 0; i < n; i++) {
      var b = i * 6, p = i ? idx[F[b]] : -1, nm = S.names[F[b + 4]], j = -1;
      if (skip[i]) { idx[i] = p; t.slf[p] += F[b + 2]; continue; }
      if (merge && i) {
        nm = key(nm, mod);
        var k = p + '\u0000' + nm;
        j = look[k] === undefined ? -1 : look[k];
        if (j < 0) look[k] = t.nm.length;
      }
      if (j < 0) {
        j = t.nm.length;
        t.nm.push(nm); t.tot.push(0); t.slf.push(0); t.bas.push(0); t.col.push(F[b + 5]);
        t.par.push(p < 0 ? 0 : p); t.kids.push([]); t.dep.push(p < 0 ? 0 : t.dep[p] + 1);
        if (p >= 0) t.kids[p].push(j);
      }
      t.tot[j] += F[b + 1]; t.slf[j] += F[b + 2]; t.bas[j] += F[b + 3];
      idx[i] = j;
    }
    return t;
  }

  /* x of every frame: children after their parent's x, in the tree's order or heaviest first. */
  function layout(t, heavy) {
    var n = t.nm.length, x = new Float64Array(n), maxd = 0;
    for (var i = 0; i < n; i++) {
      var ks = t.kids[i];
      if (heavy && ks.length > 1) ks = ks.slice().sort(function (a, b) { return t.tot[b] - t.tot[a]; });
      else if (ks.length > 1) ks = ks.slice().sort(function (a, b) { return t.nm[a] < t.nm[b] ? -1 : t.nm[a] > t.nm[b] ? 1 : a - b; });
      var cx = x[i];
      for (var k = 0; k < ks.length; k++) { x[ks[k]] = cx; cx += t.tot[ks[k]]; }
      if (t.dep[i] > maxd) maxd = t.dep[i];
    }
    t.x = x; t.maxd = maxd;
    return t;
  }

  /* One canvas drawing a tree t zoomed to frame z; returns the number of frames drawn. */
  function Pane(parent, caption) {
    this.box = mk('div', 'gp-pane');
    if (caption) this.box.appendChild(mk('div', 'gp-pane-cap', caption));
    this.canvas = mk('canvas');
    this.box.appendChild(this.canvas);
    parent.appendChild(this.box);
    var self = this;
    this.canvas.addEventListener('mousemove', function (ev) {
      var i = self.at(ev);
      details.textContent = i >= 0 ? describe(self.t, i) : '\u00a0';
      self.canvas.style.cursor = i >= 0 ? 'pointer' : 'default';
    });
    this.canvas.addEventListener('click', function (ev) {
      var i = self.at(ev);
      if (i >= 0 && self.onclick) self.onclick(i);
    });
  }
  Pane.prototype.draw = function (t, z) {
    this.t = t; this.z = z;
    var W = Math.max(200, host.clientWidth), H = (t.maxd + 1) * ROW + 2, r = window.devicePixelRatio || 1;
    var c = this.canvas, ctx = c.getContext('2d');
    c.width = Math.round(W * r); c.height = Math.round(H * r);
    c.style.width = W + 'px'; c.style.height = H + 'px';
    ctx.setTransform(r, 0, 0, r, 0, 0);
    ctx.clearRect(0, 0, W, H);
    ctx.font = '12px "DejaVu Sans", Verdana, sans-serif'; ctx.textBaseline = 'middle';
    var x0 = t.x[z], w0 = t.tot[z] || 1, sc = (W - 2 * PAD) / w0, drawn = 0, zd = t.dep[z];
    this.W = W; this.sc = sc; this.x0 = x0;
    for (var i = 0; i < t.nm.length; i++) {
      var d = t.dep[i], x, w, above = false;
      if (d < zd) { /* ancestors of the zoomed frame span the width, dimmed */
        if (!(t.x[i] <= x0 && t.x[i] + t.tot[i] >= x0 + w0)) continue;
        x = PAD; w = W - 2 * PAD; above = true;
      } else {
        if (t.x[i] + t.tot[i] <= x0 || t.x[i] >= x0 + w0) continue;
        x = PAD + (t.x[i] - x0) * sc; w = t.tot[i] * sc;
        if (w < 0.5) continue;
      }
      drawn++;
      var y = d * ROW, hit = re && re.test(t.nm[i]);
      ctx.globalAlpha = above ? 0.5 : 1;
      ctx.fillStyle = hit ? 'rgb(230,0,230)' : '#' + ('00000' + t.col[i].toString(16)).slice(-6);
      ctx.fillRect(x, y, Math.max(w - 0.5, 0.5), ROW - 1);
      ctx.globalAlpha = 1;
      if (w > 24) {
        var fit = Math.floor((w - 6) / 7), s = t.nm[i];
        if (fit >= 3) { ctx.fillStyle = '#000'; ctx.fillText(s.length <= fit ? s : s.slice(0, fit - 1) + '\u2026', x + 3, y + ROW / 2); }
      }
    }
    return drawn;
  };
  Pane.prototype.at = function (ev) {
    var t = this.t, r = this.canvas.getBoundingClientRect(), mx = ev.clientX - r.left, d = Math.floor((ev.clientY - r.top) / ROW);
    var zd = t.dep[this.z], w0 = t.tot[this.z] || 1;
    for (var i = 0; i < t.nm.length; i++) {
      if (t.dep[i] !== d) continue;
      if (d < zd) { if (t.x[i] <= this.x0 && t.x[i] + t.tot[i] >= this.x0 + w0) return i; continue; }
      var x = PAD + (t.x[i] - this.x0) * this.sc, w = t.tot[i] * this.sc;
      if (mx >= x && mx < x + w) return i;
    }
    return -1;
  };

  function describe(t, i) {
    var root = t.tot[0] || 1;
    var s = t.nm[i] + '  total ' + fmt(t.tot[i]) + ' (' + (100 * t.tot[i] / root).toFixed(2) + '%)  self ' + fmt(t.slf[i]);
    if (D.diff) {
      var d = t.tot[i] - t.bas[i];
      s += '  base ' + fmt(t.bas[i]) + '  change ' + (d >= 0 ? '+' : '') + fmt(d) +
           (t.bas[i] > 0 ? ' (' + (d >= 0 ? '+' : '') + (100 * d / t.bas[i]).toFixed(1) + '%)' : ' (new)');
    }
    return s;
  }

  /* Per name: self time, total (frames nested in a frame of the same name counted once), frames. */
  function perName(t) {
    var acc = {}, open = {}, n = t.nm.length;
    var nested = new Uint8Array(n); /* under an ancestor with the same name */
    for (var i = 1; i < n; i++) {
      var p = t.par[i];
      for (var a = p; a > 0; a = t.par[a]) if (t.nm[a] === t.nm[i]) { nested[i] = 1; break; }
      var e = acc[t.nm[i]] || (acc[t.nm[i]] = { name: t.nm[i], self: 0, total: 0, frames: 0 });
      e.self += t.slf[i]; e.frames++;
      if (!nested[i]) e.total += t.tot[i];
    }
    return Object.keys(acc).map(function (k) { return acc[k]; });
  }

  /* Sandwich trees of name: callees (the merged subtrees of its outermost frames) and callers
   * (the paths from those frames up to the root, reversed), each rooted at the name. */
  function sandwich(t, name) {
    var callees = { nm: [name], tot: [0], slf: [0], bas: [0], col: [0x999999], par: [0], kids: [[]], dep: [0] };
    var callers = { nm: [name], tot: [0], slf: [0], bas: [0], col: [0x999999], par: [0], kids: [[]], dep: [0] };
    function child(tr, p, nm, col) {
      var ks = tr.kids[p];
      for (var k = 0; k < ks.length; k++) if (tr.nm[ks[k]] === nm) return ks[k];
      var j = tr.nm.length;
      tr.nm.push(nm); tr.tot.push(0); tr.slf.push(0); tr.bas.push(0); tr.col.push(col);
      tr.par.push(p); tr.kids.push([]); tr.dep.push(tr.dep[p] + 1); ks.push(j);
      return j;
    }
    function copy(i, into) {
      t.kids[i].forEach(function (c) {
        var j = child(callees, into, t.nm[c], t.col[c]);
        callees.tot[j] += t.tot[c]; callees.slf[j] += t.slf[c]; callees.bas[j] += t.bas[c];
        copy(c, j);
      });
    }
    for (var i = 1; i < t.nm.length; i++) {
      if (t.nm[i] !== name) continue;
      var outer = true;
      for (var a = t.par[i]; a > 0; a = t.par[a]) if (t.nm[a] === name) { outer = false; break; }
      if (!outer) continue;
      callees.tot[0] += t.tot[i]; callees.slf[0] += t.slf[i]; callees.col[0] = t.col[i];
      copy(i, 0);
      callers.tot[0] += t.tot[i]; callers.col[0] = t.col[i];
      var at = 0;
      for (var b = t.par[i]; ; b = t.par[b]) {
        at = child(callers, at, t.nm[b], t.col[b]);
        callers.tot[at] += t.tot[i];
        if (b === 0) break;
      }
    }
    for (var k = 0; k < callers.nm.length; k++) {
      var sum = 0;
      callers.kids[k].forEach(function (c) { sum += callers.tot[c]; });
      callers.slf[k] = callers.tot[k] - sum;
    }
    return { callers: layout(callers, true), callees: layout(callees, true) };
  }

  var panes = [];
  function clearPanes() { host.textContent = ''; panes = []; }
  function pane(caption) { var p = new Pane(host, caption); panes.push(p); return p; }

  function search() {
    re = null;
    if (state.term) { try { re = new RegExp(state.term); } catch (e) { re = null; } }
    var t = T, n = t.nm.length, under = new Uint8Array(n), sum = 0, count = 0;
    for (var i = 0; i < n; i++) {
      var h = !!(re && re.test(t.nm[i])), pu = i ? under[t.par[i]] : 0;
      under[i] = h || pu ? 1 : 0;
      if (h) { count++; if (!pu) sum += t.tot[i]; }
    }
    var pct = re && t.tot[0] > 0 ? 100 * sum / t.tot[0] : 0;
    matchedEl.textContent = re ? 'Matched: ' + pct.toFixed(1) + '% (' + count + ' frames)' : '';
    matchedEl.setAttribute('data-pct', re ? pct.toFixed(1) : '');
    matchedEl.setAttribute('data-count', re ? String(count) : '');
  }

  function table() {
    var rows = perName(T), sortKey = 'self';
    tableEl.textContent = '';
    var tb = mk('table', 'gp-self'), hd = mk('tr');
    [['name', 'name'], ['self', 'self time'], ['total', 'total (once per stack)'], ['frames', 'frames']].forEach(function (h) {
      var th = mk('th', '', h[1]);
      th.addEventListener('click', function () { sortKey = h[0]; fill(); });
      hd.appendChild(th);
    });
    tb.appendChild(hd);
    var body = mk('tbody');
    tb.appendChild(body);
    function fill() {
      rows.sort(function (a, b) { return sortKey === 'name' ? (a.name < b.name ? -1 : 1) : b[sortKey] - a[sortKey]; });
      body.textContent = '';
      rows.slice(0, 2000).forEach(function (r) {
        if (re && !re.test(r.name)) return;
        var tr = mk('tr'), root = T.tot[0] || 1;
        tr.appendChild(mk('td', 'gp-name', r.name));
        tr.appendChild(mk('td', 'gp-num', fmt(r.self) + ' (' + (100 * r.self / root).toFixed(1) + '%)'));
        tr.appendChild(mk('td', 'gp-num', fmt(r.total) + ' (' + (100 * r.total / root).toFixed(1) + '%)'));
        tr.appendChild(mk('td', 'gp-num', String(r.frames)));
        tr.title = 'sandwich view of this name';
        tr.addEventListener('click', function () { state.view = 'sandwich'; state.name = r.name; render(); });
        body.appendChild(tr);
      });
      tableEl.setAttribute('data-rows', String(body.rows.length));
    }
    fill();
    tableEl.appendChild(tb);
  }

  function render() {
    var S = state.by !== primaryBy && D.alt ? D.alt : D, fold = state.fold && !!S.py;
    var k0 = (state.merge ? 'gpMerged' : 'gpTree') + (fold ? 'Folded' : '');
    T = S[k0] || (S[k0] = tree(state.merge, S, fold));
    var sub = S === D ? subMain : subAlt, cur = document.querySelector('.gp-sub');
    if (sub && cur && cur !== sub) cur.parentNode.replaceChild(sub, cur);
    if (sub) { /* the status line: the view and the tree now shown */
      var how = [state.merge ? 'merged' : '', fold ? 'folded' : ''].filter(Boolean).join(', ');
      statusEl.textContent = ' \u2014 ' + VIEW_NAMES[state.view] + (state.view === 'sandwich' && state.name ? ' of ' + state.name : '') +
        ', ' + T.nm.length.toLocaleString('en-US') + ' frames shown' + (how ? ' (' + how + ')' : '');
      statusEl.setAttribute('data-view', state.view);
      sub.appendChild(statusEl);
    }
    layout(T, state.view === 'left');
    if (!(state.zoom >= 0 && state.zoom < T.nm.length)) state.zoom = 0;
    search();
    clearPanes();
    tableEl.textContent = '';
    tableEl.removeAttribute('data-rows');
    var drawn = 0;
    if (state.view === 'table') {
      table();
    } else if (state.view === 'sandwich') {
      if (!state.name) {
        var best = perName(T).sort(function (a, b) { return b.self - a.self; })[0];
        state.name = best ? best.name : T.nm[0];
      }
      var sw = sandwich(T, state.name);
      var p1 = pane('callers of ' + state.name + ' (who calls it, outward from it)');
      drawn += p1.draw(sw.callers, 0);
      var p2 = pane('callees of ' + state.name + ' (what it calls)');
      drawn += p2.draw(sw.callees, 0);
      p1.onclick = function (i) { state.name = sw.callers.nm[i]; render(); };
      p2.onclick = function (i) { state.name = sw.callees.nm[i]; render(); };
    } else {
      var p = pane('');
      drawn = p.draw(T, state.zoom);
      p.onclick = function (i) { state.zoom = i === state.zoom ? 0 : i; render(); };
    }
    var btns = document.querySelectorAll('.gp-views button');
    for (var k = 0; k < btns.length; k++) btns[k].className = btns[k].getAttribute('data-view') === state.view ? 'gp-on' : '';
    var bb = document.querySelectorAll('.gp-bys button');
    for (var q = 0; q < bb.length; q++) bb[q].className = bb[q].getAttribute('data-by') === (S === D ? primaryBy : D.alt.by) ? 'gp-on' : '';
    host.setAttribute('data-view', state.view);
    host.setAttribute('data-by', S === D ? primaryBy : D.alt.by);
    host.setAttribute('data-zoom', String(state.zoom));
    host.setAttribute('data-drawn', String(drawn));
    host.setAttribute('data-tree-frames', String(T.nm.length));
    window.gpFlame = { tree: T, state: state }; /* read by the browser tests */
    if (input.value !== state.term) input.value = state.term;
    mergeBox.checked = state.merge;
    if (foldBox) foldBox.checked = state.fold;
    save();
  }

  function save() {
    var parts = [];
    if (state.view !== 'flame') parts.push('v=' + state.view);
    if (state.zoom) parts.push('f=' + state.zoom);
    if (state.term) parts.push('s=' + encodeURIComponent(state.term));
    if (state.merge) parts.push('m=1');
    if (state.view === 'sandwich' && state.name) parts.push('n=' + encodeURIComponent(state.name));
    if (state.by !== primaryBy) parts.push('b=' + state.by);
    if (foldBox && !state.fold) parts.push('p=1');
    var h = parts.length ? '#' + parts.join('&') : '';
    lastHash = h;
    try { history.replaceState(null, '', h || location.pathname + location.search); } catch (e) { /* file: quirks */ }
  }
  var lastHash = null;
  function load() {
    if (location.hash === lastHash) return;
    var st = {};
    location.hash.replace(/^#/, '').split('&').forEach(function (kv) {
      var j = kv.indexOf('=');
      if (j > 0) st[kv.slice(0, j)] = decodeURIComponent(kv.slice(j + 1));
    });
    state.view = { left: 'left', sandwich: 'sandwich', table: 'table' }[st.v] || 'flame';
    state.zoom = st.f ? parseInt(st.f, 10) : 0;
    state.term = st.s || '';
    state.merge = st.m === '1';
    state.name = st.n || '';
    state.by = D.alt && st.b === D.alt.by ? D.alt.by : primaryBy;
    state.fold = !!foldBox && st.p !== '1';
    render();
  }

  var vb = document.querySelectorAll('.gp-views button');
  for (var k = 0; k < vb.length; k++)
    vb[k].addEventListener('click', function () { state.view = this.getAttribute('data-view'); state.zoom = 0; render(); });
  var byb = document.querySelectorAll('.gp-bys button');
  for (var q = 0; q < byb.length; q++)
    byb[q].addEventListener('click', function () { state.by = this.getAttribute('data-by'); state.zoom = 0; state.name = ''; render(); });
  mergeBox.addEventListener('change', function () { state.merge = mergeBox.checked; state.zoom = 0; render(); });
  if (foldBox) foldBox.addEventListener('change', function () { state.fold = foldBox.checked; state.zoom = 0; render(); });
  input.addEventListener('input', function () { state.term = input.value; render(); });
  document.getElementById('gp-reset').addEventListener('click', function () { state.zoom = 0; render(); });
  window.addEventListener('hashchange', load);
  var rt = null;
  window.addEventListener('resize', function () { clearTimeout(rt); rt = setTimeout(render, 50); });
  load();
  host.setAttribute('data-ready', '1');
  document.documentElement.setAttribute('data-ready', '1');
})();
