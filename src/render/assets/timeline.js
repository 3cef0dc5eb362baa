/* gpuprof timeline: draws the tracks of a trace on a canvas with level of detail, so a million
 * events stay smooth. Data (made by timeline_html.c, documented in docs/internals/report.md) is
 * delta-encoded per row:
 *   slice rows  "e": [dts, dur, name, code, corr, ...]   (5 numbers per event)
 *   counter rows "c": [dts, value, ...]
 * code = kind + 16 * depth (+ 4096 * depth without Python frames, in rows with "dn"); a depth of
 * 255 is not drawn in that mode. corr is 0 (none) or the event's correlation number (dense per
 * rank: k is the k-th smallest id) minus the previous one, plus 1 when >= 0. A second JSON script
 * (id + "-args") holds the exact ids (correlation ids per rank by number, External ids per event),
 * the arguments of every event and the record_shapes args of CPU ops by External id; it is parsed
 * only when an event is hovered or selected.
 * Each slice row is split by depth into levels; within a level events never overlap, so both
 * starts and ends are sorted and a binary search finds the first visible event. An event narrower
 * than a pixel is drawn as one pixel column and the walk jumps to the next column (binary search),
 * so the cost per level is bounded by the pixels, not by the events.
 * Layout: per rank (a header row that collapses the rank to one row of its GPU streams), GPU
 * streams, CPU threads, other rows, counters; each track collapses to one level and shows at most
 * MAX_LEVELS levels until expanded. The canvas is sticky inside a scrolling element, so the wheel
 * scrolls the tracks; ctrl/cmd+wheel zooms.
 * Any element with class "gp-tl" and data-src="<id of a JSON script>" becomes a timeline. */
(function () {
  'use strict';
  var LABEL_W = 220, SLICE_H = 16, COUNTER_H = 40, RULER_H = 22, GAP = 6, RANK_H = 20, EXP_H = 14;
  var MAX_LEVELS = 8, MIN_VIEW = 50, SEL_COLOR = '#0030ff', COLL_COLOR = '#ff7a00';
  var GPU_KINDS = { kernel: 1, gpu_memcpy: 1, gpu_memset: 1, cuda_sync: 1, gpu_user_annotation: 1 };
  var UNITS = [[1e9, 's'], [1e6, 'ms'], [1e3, '\u00b5s'], [1, 'ns']];

  function lowerBound(a, v, lo, hi) { /* first i in [lo,hi) with a[i] >= v */
    while (lo < hi) { var m = (lo + hi) >>> 1; if (a[m] < v) lo = m + 1; else hi = m; }
    return lo;
  }
  function upperBound(a, v, lo, hi) { /* first i in [lo,hi) with a[i] > v */
    while (lo < hi) { var m = (lo + hi) >>> 1; if (a[m] <= v) lo = m + 1; else hi = m; }
    return lo;
  }
  function trim(s) { return s.indexOf('.') < 0 ? s : s.replace(/\.?0+$/, ''); }
  /* A duration with three significant decimals at most and no trailing zeros ("1.25 ms"). */
  function fmt(ns) {
    var a = Math.abs(ns);
    for (var k = 0; k < 3; k++) if (a >= UNITS[k][0]) return trim((ns / UNITS[k][0]).toFixed(3)) + ' ' + UNITS[k][1];
    return Math.round(ns) + ' ns';
  }
  /* A ruler label: the unit of the value, as many decimals as the tick step needs ("100 ms"). */
  function fmtTick(t, step) {
    var a = Math.abs(t), k = 0;
    while (k < 3 && a < UNITS[k][0]) k++;
    if (t === 0) { while (k < 3 && step < UNITS[k][0]) k++; }
    var u = UNITS[k][0], dec = Math.max(0, Math.ceil(-Math.log10(step / u) - 1e-9));
    return (t / u).toFixed(Math.min(dec, 6)) + ' ' + UNITS[k][1];
  }
  /* A time from the trace start to the ns (the ruler's origin): "12.345678 ms". */
  function fmtAbs(ns) {
    return ns >= 1e6 ? (ns / 1e6).toFixed(6) + ' ms' : ns >= 1e3 ? (ns / 1e3).toFixed(3) + ' \u00b5s' : Math.round(ns) + ' ns';
  }
  function bytes(b) {
    var u = ['B', 'KiB', 'MiB', 'GiB', 'TiB'], i = 0;
    while (Math.abs(b) >= 1024 && i < 4) { b /= 1024; i++; }
    return (i ? b.toFixed(2) : String(Math.round(b))) + ' ' + u[i];
  }
  function hash(s) {
    var h = 2166136261;
    for (var i = 0; i < s.length; i++) { h ^= s.charCodeAt(i); h = Math.imul(h, 16777619); }
    return h >>> 0;
  }
  function mk(tag, cls, text) {
    var e = document.createElement(tag);
    if (cls) e.className = cls;
    if (text !== undefined) e.textContent = text;
    return e;
  }

  /* With Python frames: the depth of every event once the Python frames with exactly one child
   * are folded away (255 for those), so the ops come up to the first levels. Events are in time
   * order, longer first, so a parent comes before its children. */
  function foldedDepths(e, n, pyKind) {
    var dep = new Uint8Array(n), par = new Int32Array(n), kids = new Int32Array(n), up = new Uint8Array(n);
    var last = new Int32Array(256).fill(-1), i, d;
    for (i = 0; i < n; i++) {
      d = (e[i * 5 + 3] >> 4) & 255;
      par[i] = d > 0 && d < 255 ? last[d - 1] : -1;
      if (d < 255) last[d] = i;
      if (par[i] >= 0) kids[par[i]]++;
    }
    for (i = 0; i < n; i++) {
      d = (e[i * 5 + 3] >> 4) & 255;
      var p = par[i], hideP = p >= 0 && kids[p] === 1 && (e[p * 5 + 3] & 15) === pyKind;
      up[i] = p >= 0 ? up[p] + (hideP ? 1 : 0) : 0;
      dep[i] = d >= 255 || (kids[i] === 1 && (e[i * 5 + 3] & 15) === pyKind) ? 255 : d - up[i];
    }
    return dep;
  }

  /* Levels of a slice row from its raw event array, for one mode (py: with Python frames; fold:
   * those with one child folded away). */
  function buildLevels(r, py, fold) {
    var e = r.e, n = e.length / 5, withDn = r.dn !== undefined, nd = (py || !withDn ? r.d : r.dn) + 1;
    var pyKind = r.pyKind, counts = new Int32Array(nd), i, d, code;
    var fd = py && fold && withDn ? foldedDepths(e, n, pyKind) : null, cur = 0;
    function depthOf(code) {
      if (fd) return fd[cur];
      if (py || !withDn) return (code >> 4) & 255;
      return (code & 15) === pyKind ? 255 : code >> 12;
    }
    for (i = 0; i < n; i++) { cur = i; d = depthOf(e[i * 5 + 3]); if (d < nd) counts[d]++; }
    var lv = [];
    for (d = 0; d < nd; d++) {
      var m = counts[d];
      lv.push({ n: 0, ts: new Float64Array(m), end: new Float64Array(m), name: new Int32Array(m),
                kind: new Uint8Array(m), corr: new Float64Array(m), idx: new Int32Array(m),
                coll: r.clMap ? new Int32Array(m) : null });
    }
    var t = 0, c = 0;
    for (i = 0; i < n; i++) {
      var b = i * 5, cv = e[b + 4];
      t += e[b];
      if (cv !== 0) c += cv > 0 ? cv - 1 : cv;
      code = e[b + 3]; cur = i; d = depthOf(code);
      if (d >= nd) continue;
      var L = lv[d], k = L.n++;
      L.ts[k] = t; L.end[k] = t + e[b + 1]; L.name[k] = e[b + 2]; L.kind[k] = code & 15;
      L.corr[k] = cv !== 0 ? c : 0; L.idx[k] = i;
      if (L.coll) L.coll[k] = r.clMap.get(i) || 0;
    }
    while (lv.length && lv[lv.length - 1].n === 0) lv.pop();
    return lv;
  }

  function decode(D) {
    var pyKind = D.kinds.indexOf('python_function'), rows = [];
    D.rows.forEach(function (r, ri) {
      var row = { label: r.l, kind: r.k, rank: r.r, index: ri, collapsed: false, maxLevels: MAX_LEVELS };
      if (r.e) {
        r.pyKind = pyKind;
        if (r.cl) { /* collective members: event number -> 1 + collective index */
          r.clMap = new Map();
          for (var q = 0; q + 1 < r.cl.length; q += 2) r.clMap.set(r.cl[q], r.cl[q + 1]);
          row.coll = true;
        }
        row.py = r.dn !== undefined;
        if (row.py) { row.raw = r; row.modes = {}; }
        else { row.lv = buildLevels(r, true); r.e = null; }
      } else {
        var s = r.c || [], ns = s.length / 2, ts = new Float64Array(ns), val = new Float64Array(ns),
            tt = 0, max = 0;
        for (var j = 0; j < ns; j++) {
          tt += s[2 * j]; ts[j] = tt; val[j] = s[2 * j + 1] || 0;
          if (val[j] > max) max = val[j];
        }
        row.ts = ts; row.val = val; row.max = max;
      }
      rows.push(row);
    });
    return rows;
  }

  function Timeline(el, D) {
    this.el = el; this.D = D; this.id = el.id;
    this.rows = decode(D);
    this.names = D.names; this.kinds = D.kinds;
    this.span = Math.max(1, D.span);
    this.v0 = 0; this.v1 = this.span; this.scrollY = 0;
    /* Python frames on by default: on a CPU-bound step they are where the host time goes (the
     * CPU thread looks empty without them), and folding single-child chains keeps the ops in the
     * first levels (docs/report.md) */
    this.showPy = true; this.fold = true; this.rankFilter = -1;
    this.sel = null; this.flow = null; this.area = null; this.match = null;
    this.colors = {};
    var ranks = [];
    this.rows.forEach(function (r) { if (ranks.indexOf(r.rank) < 0) ranks.push(r.rank); });
    this.ranks = ranks;
    this.multi = ranks.length > 1;
    this.rankCollapsed = {};
    var self = this;
    ranks.forEach(function (r) { self.rankCollapsed[r] = ranks.length > 2; });
    this.hasPy = this.rows.some(function (r) { return r.py; });
    this.buildDom();
    this.bind();
    this.resize();
    /* a job opens on the span where its ranks have slices, not on the empty time around it */
    var w = this.multi ? this.workSpan() : null;
    if (w && (w[1] - w[0]) < 0.98 * this.span) {
      var pad = 0.01 * (w[1] - w[0]);
      this.setView(w[0] - pad, w[1] + pad); this.draw();
    }
    el.setAttribute('data-open-view', Math.round(this.v0) + ',' + Math.round(this.v1));
  }
  var P = Timeline.prototype;

  /* [first start, last end] of the slices of the GPU and CPU rows, null when there are none. */
  P.workSpan = function () {
    var lo = Infinity, hi = -Infinity;
    this.rows.forEach(function (row) {
      if (row.ts || (row.kind !== 'gpu' && row.kind !== 'cpu')) return; /* slices of GPU streams and CPU threads */
      var lv = row.lv;
      if (!lv) { /* raw rows: one pass over the deltas */
        var e = row.raw.e, t = 0;
        for (var i = 0; i < e.length; i += 5) { t += e[i]; if (t < lo) lo = t; if (t + e[i + 1] > hi) hi = t + e[i + 1]; }
        return;
      }
      lv.forEach(function (L) {
        if (!L.n) return;
        if (L.ts[0] < lo) lo = L.ts[0];
        if (L.end[L.n - 1] > hi) hi = L.end[L.n - 1]; /* a level's events do not overlap */
      });
    });
    return lo < hi ? [lo, hi] : null;
  };

  P.levels = function (row) {
    if (!row.py) return row.lv;
    var m = this.showPy ? (this.fold ? 'pyfold' : 'py') : 'nopy';
    if (!row.modes[m]) row.modes[m] = buildLevels(row.raw, this.showPy, this.fold);
    return row.modes[m];
  };

  P.buildDom = function () {
    var el = this.el, id = this.id, self = this;
    var bar = mk('div', 'gp-tl-bar');
    this.search = mk('input'); this.search.type = 'search'; this.search.id = id + '-search';
    this.search.placeholder = 'Search events by name'; this.search.setAttribute('aria-label', 'Search events');
    var prev = mk('button', '', '\u25c0'), next = mk('button', '', '\u25b6');
    prev.title = 'previous match (shift+Enter)'; next.title = 'next match (Enter)';
    prev.id = id + '-prev'; next.id = id + '-next';
    this.count = mk('span', 'gp-tl-count'); this.count.id = id + '-count';
    bar.appendChild(this.search); bar.appendChild(prev); bar.appendChild(next); bar.appendChild(this.count);
    if (this.hasPy) {
      var lab = mk('label', 'gp-tl-opt'), cb = mk('input');
      cb.type = 'checkbox'; cb.id = id + '-py'; cb.checked = true;
      lab.appendChild(cb); lab.appendChild(document.createTextNode(' Python frames'));
      bar.appendChild(lab);
      cb.addEventListener('change', function () {
        self.showPy = cb.checked; self.sel = null; self.flow = null; self.layout(); self.doSearch(self.search.value); self.refresh();
      });
      var lab2 = mk('label', 'gp-tl-opt'), cb2 = mk('input');
      cb2.type = 'checkbox'; cb2.id = id + '-fold'; cb2.checked = true;
      lab2.title = 'with Python frames: hide the frames that have one child, so the ops show in the first levels';
      lab2.appendChild(cb2); lab2.appendChild(document.createTextNode(' fold single-child frames'));
      bar.appendChild(lab2);
      cb2.addEventListener('change', function () {
        self.fold = cb2.checked; self.sel = null; self.flow = null; self.layout(); self.doSearch(self.search.value); self.refresh();
      });
    }
    if (this.multi) {
      var sel = mk('select'); sel.id = id + '-rank'; sel.setAttribute('aria-label', 'Rank');
      var o = mk('option', '', 'all ranks'); o.value = '-1'; sel.appendChild(o);
      this.ranks.forEach(function (r) { var op = mk('option', '', 'rank ' + r); op.value = String(r); sel.appendChild(op); });
      sel.addEventListener('change', function () { self.rankFilter = +sel.value; self.scrollY = 0; self.refresh(); });
      var btn = mk('button', '', 'collapse ranks'); btn.id = id + '-collapse';
      btn.addEventListener('click', function () {
        var any = self.ranks.some(function (r) { return !self.rankCollapsed[r]; });
        self.ranks.forEach(function (r) { self.rankCollapsed[r] = any; });
        self.refresh();
      });
      this.collapseBtn = btn;
      bar.appendChild(sel); bar.appendChild(btn);
    }
    el.parentNode.insertBefore(bar, el);
    this.canvas = mk('canvas');
    this.spacer = mk('div', 'gp-tl-spacer');
    el.appendChild(this.canvas); el.appendChild(this.spacer);
    this.tip = mk('div', 'gp-tl-tip'); this.tip.id = id + '-tip';
    document.body.appendChild(this.tip);
    this.details = document.getElementById(id + '-details');
    this.agg = document.getElementById(id + '-agg');
    if (!this.agg) {
      this.agg = mk('div', 'gp-tl-agg'); this.agg.id = id + '-agg';
      (this.details || el).parentNode.insertBefore(this.agg, this.details ? this.details.nextSibling : el.nextSibling);
    }
    this.search.addEventListener('input', function () { self.doSearch(self.search.value); });
    this.search.addEventListener('keydown', function (ev) {
      if (ev.key === 'Enter') { self.step(ev.shiftKey ? -1 : 1); ev.preventDefault(); }
    });
    prev.addEventListener('click', function () { self.step(-1); });
    next.addEventListener('click', function () { self.step(1); });
  };

  /* The visible items top to bottom: rank headers (or a collapsed rank's one row), tracks. */
  P.layout = function () {
    var items = [], y = RULER_H, self = this;
    this.ranks.forEach(function (rank) {
      if (self.rankFilter >= 0 && rank !== self.rankFilter) return;
      var rows = self.rows.filter(function (r) { return r.rank === rank; });
      if (self.multi) {
        var coll = self.rankCollapsed[rank], h = coll ? SLICE_H + GAP : RANK_H;
        items.push({ type: 'rank', rank: rank, y: y, h: h, rows: rows, collapsed: coll,
                     label: (coll ? '\u25b8 ' : '\u25be ') + 'rank ' + rank + (coll ? ' (' + rows.length + ' tracks)' : '') });
        y += h;
        if (coll) return;
      }
      rows.forEach(function (row) {
        var it = { type: 'track', row: row, y: y };
        if (row.ts) { it.h = COUNTER_H + GAP; it.shown = 0; }
        else {
          var lv = self.levels(row), n = lv.length;
          if (n === 0) return; /* nothing in this mode (a thread of Python frames only) */
          it.total = n;
          it.shown = row.collapsed ? 1 : Math.min(n, row.maxLevels);
          it.more = it.total - it.shown;
          it.h = it.shown * SLICE_H + (it.more > 0 && !row.collapsed ? EXP_H : 0) + GAP;
        }
        items.push(it);
        y += it.h;
      });
    });
    this.items = items;
    this.contentH = y;
    this.el.setAttribute('data-visible-rows', String(items.length));
    this.el.setAttribute('data-first-track', items.length ? (items[0].row ? items[0].row.label : 'rank ' + items[0].rank) : '');
    if (this.collapseBtn) {
      var any = this.ranks.some(function (r) { return !self.rankCollapsed[r]; });
      this.collapseBtn.textContent = any ? 'collapse ranks' : 'expand ranks';
    }
  };
  P.refresh = function () {
    this.layout();
    this.spacer.style.height = Math.max(0, this.contentH - this.H) + 'px';
    this.scrollY = Math.max(0, Math.min(this.el.scrollTop, this.contentH - this.H));
    this.draw();
  };

  P.resize = function () {
    var r = window.devicePixelRatio || 1, w = this.el.clientWidth, h = this.el.clientHeight;
    this.W = w; this.H = h;
    this.canvas.width = Math.round(w * r); this.canvas.height = Math.round(h * r);
    this.canvas.style.width = w + 'px'; this.canvas.style.height = h + 'px';
    this.ctx = this.canvas.getContext('2d');
    this.ctx.setTransform(r, 0, 0, r, 0, 0);
    this.refresh();
  };
  P.X = function (t) { return LABEL_W + (t - this.v0) * (this.W - LABEL_W) / (this.v1 - this.v0); };
  P.T = function (x) { return this.v0 + (x - LABEL_W) * (this.v1 - this.v0) / (this.W - LABEL_W); };
  P.color = function (name, kind) {
    var key = kind * 1000003 + name, c = this.colors[key];
    if (c) return c;
    var h = hash(this.names[name] || ''), kn = this.kinds[kind];
    if (kn === 'kernel') c = 'hsl(' + (90 + h % 60) + ',55%,' + (50 + (h >> 8) % 15) + '%)';
    else if (kn === 'gpu_memcpy' || kn === 'gpu_memset') c = 'hsl(' + (200 + h % 30) + ',65%,60%)';
    else if (kn === 'cuda_runtime' || kn === 'cuda_driver') c = 'hsl(0,0%,' + (62 + h % 15) + '%)';
    else if (kn === 'cuda_sync') c = 'hsl(0,70%,65%)';
    else if (kn === 'python_function') c = 'hsl(' + (45 + h % 15) + ',75%,65%)';
    else c = 'hsl(' + (h % 40 + 10) + ',70%,' + (58 + (h >> 8) % 14) + '%)';
    this.colors[key] = c;
    return c;
  };

  P.draw = function () {
    var ctx = this.ctx, W = this.W, H = this.H, self = this, sy = this.scrollY;
    if (!ctx) return;
    ctx.clearRect(0, 0, W, H);
    ctx.font = '11px "DejaVu Sans", Verdana, sans-serif';
    ctx.textBaseline = 'middle';
    ctx.save();
    ctx.beginPath(); ctx.rect(LABEL_W, RULER_H, W - LABEL_W, H - RULER_H); ctx.clip();
    this.items.forEach(function (it) {
      var y = it.y - sy;
      if (y + it.h < RULER_H || y > H) return;
      if (it.type === 'rank') {
        ctx.fillStyle = '#eef2f7'; ctx.fillRect(LABEL_W, y, W - LABEL_W, it.h - 2);
        if (it.collapsed) /* the rank's GPU streams overlaid: where its GPUs are busy */
          it.rows.forEach(function (row) {
            if (row.kind === 'gpu') { var lv = self.levels(row); if (lv.length) self.drawLevel(row, lv[0], 0, y + 2, 1); }
          });
      } else if (it.row.ts) self.drawCounter(it.row, y, it.h - GAP);
      else {
        var lv = self.levels(it.row);
        for (var d = 0; d < it.shown; d++) self.drawLevel(it.row, lv[d], d, y + d * SLICE_H, 0);
        if (it.more > 0 && !it.row.collapsed) {
          ctx.fillStyle = 'rgba(0,0,0,0.04)'; ctx.fillRect(LABEL_W, y + it.shown * SLICE_H, W - LABEL_W, EXP_H - 2);
        }
      }
    });
    this.drawFlow();
    this.drawSel();
    ctx.restore();
    /* the label column, labels sticky at the top of their track while it is on screen */
    ctx.fillStyle = '#fff'; ctx.fillRect(0, 0, LABEL_W, H);
    ctx.strokeStyle = '#ddd'; ctx.beginPath(); ctx.moveTo(LABEL_W - 0.5, 0); ctx.lineTo(LABEL_W - 0.5, H); ctx.stroke();
    this.items.forEach(function (it) {
      var y = it.y - sy;
      if (y + it.h < RULER_H || y > H) return;
      var ly = Math.min(Math.max(y, RULER_H), y + it.h - GAP - SLICE_H);
      if (it.type === 'rank') {
        ctx.fillStyle = '#dde5f0'; ctx.fillRect(0, y, LABEL_W - 1, it.h - 2);
        ctx.fillStyle = '#123'; ctx.font = 'bold 11px "DejaVu Sans", Verdana, sans-serif';
        ctx.fillText(it.label, 6, ly + (it.h - 2) / 2);
        ctx.font = '11px "DejaVu Sans", Verdana, sans-serif';
        return;
      }
      var row = it.row, lab = row.label, pre = row.ts ? '' : (row.collapsed ? '\u25b8 ' : (it.total > 1 ? '\u25be ' : '  '));
      if (self.multi) lab = lab + '';
      ctx.fillStyle = row.kind === 'gpu' ? '#1a6b1a' : row.kind === 'cpu' ? '#7a3b00' : '#333';
      var txt = pre + lab;
      ctx.fillText(txt.length > 34 ? txt.slice(0, 33) + '\u2026' : txt, 6 + (self.multi ? 8 : 0), ly + 8);
      if (it.more > 0 && !row.collapsed) {
        ctx.fillStyle = '#1558b0';
        ctx.fillText('\u25bf ' + it.more + ' more level' + (it.more > 1 ? 's' : ''), 18 + (self.multi ? 8 : 0), y + it.shown * SLICE_H + EXP_H / 2);
      } else if (row.collapsed && it.total > 1) {
        ctx.fillStyle = '#888'; ctx.fillText(it.total + ' levels', LABEL_W - 60, ly + 8);
      }
      ctx.strokeStyle = '#eee'; ctx.beginPath(); ctx.moveTo(0, y + it.h - GAP / 2);
      ctx.lineTo(W, y + it.h - GAP / 2); ctx.stroke();
    });
    this.drawRuler();
    if (this.area) {
      var a = this.X(Math.min(this.area.t0, this.area.t1)), b = this.X(Math.max(this.area.t0, this.area.t1));
      a = Math.max(a, LABEL_W); b = Math.min(b, W);
      var ya = Math.max(RULER_H, Math.min(this.area.y0, this.area.y1) - sy), yb = Math.min(H, Math.max(this.area.y0, this.area.y1) - sy);
      ctx.fillStyle = 'rgba(30,100,255,0.12)'; ctx.fillRect(a, ya, b - a, yb - ya);
      ctx.strokeStyle = 'rgba(30,100,255,0.6)'; ctx.strokeRect(a, ya, b - a, yb - ya);
      ctx.fillStyle = '#124'; ctx.fillText(fmt(Math.abs(this.area.t1 - this.area.t0)), a + 4, ya + 10);
    }
  };

  /* One level of a slice row at y; summary: a collapsed rank's row (thin, no labels). */
  P.drawLevel = function (row, L, d, y, summary) {
    var ctx = this.ctx, v0 = this.v0, v1 = this.v1, sel = this.sel, n = L.n, hl = this.matchNames;
    var h = summary ? SLICE_H - 2 : SLICE_H - 1;
    var hits = hl && L.hitGen === this.searchGen ? L.hits : null;
    var i = upperBound(L.end, v0, 0, n), colEnd = -Infinity;
    while (i < n && L.ts[i] < v1) {
      var x0 = this.X(L.ts[i]), x1 = this.X(L.end[i]);
      if (x0 < LABEL_W) x0 = LABEL_W;
      var dim = hl && !hl[L.name[i]], ci = i;
      if (x1 - x0 < 1) {
        /* level of detail: one pixel column for the events starting in it, in the colour of the
         * first, or of the first search hit among them when there is one */
        var px = Math.floor(x0), j = lowerBound(L.ts, this.T(px + 1), i + 1, n);
        if (j <= i) j = i + 1;
        /* a level's events do not overlap, so only the last one starting in the column can
         * reach past it (ProfilerStep#6 after the profiler's own tiny calls): it is drawn whole */
        if (j - 1 > i && this.X(L.end[j - 1]) - this.X(L.ts[j - 1]) >= 1) j--;
        if (dim && hits) {
          var q = lowerBound(hits, i, 0, hits.length);
          if (q < hits.length && hits[q] < j) { ci = hits[q]; dim = false; }
        }
        ctx.fillStyle = dim ? '#e4e4e4' : this.color(L.name[ci], L.kind[ci]);
        ctx.fillRect(px, y, 1, h);
        colEnd = px + 1;
        i = j;
        continue;
      }
      if (x0 < colEnd) x0 = colEnd; /* the column before it keeps its colour (a search hit's) */
      ctx.fillStyle = dim ? '#e4e4e4' : this.color(L.name[i], L.kind[i]);
      ctx.fillRect(x0, y, x1 - x0, h);
      if (!summary && x1 - x0 > 30) {
        var nm = this.names[L.name[i]], fit = Math.floor((x1 - x0 - 6) / 6.2);
        if (fit >= 3) {
          ctx.fillStyle = dim ? '#999' : '#000';
          ctx.fillText(nm.length > fit ? nm.slice(0, fit - 1) + '\u2026' : nm, x0 + 3, y + 8);
        }
      }
      i++;
    }
  };

  /* The selected event outlined at any width: at least 5 px wide, centred on it when narrower. */
  P.drawSel = function () {
    var s = this.sel, ctx = this.ctx, self = this, shown = 0;
    this.el.removeAttribute('data-sel-x');
    /* the selected collective on every rank, outlined in orange (in a collapsed rank's row too) */
    (this.collMembers || []).forEach(function (m) {
      var y = self.place(m);
      if (y === null && m.level === 0 && self.rankCollapsed[m.row.rank])
        self.items.forEach(function (it) { if (it.type === 'rank' && it.rank === m.row.rank && it.collapsed) y = it.y - self.scrollY + 2; });
      if (y === null || y < RULER_H - SLICE_H || y > self.H) return;
      var M = m.row.lvs[m.level], a = self.X(M.ts[m.i]), b = self.X(M.end[m.i]);
      if (b < LABEL_W || a > self.W) return;
      if (b - a < 5) { var c = (a + b) / 2; a = c - 2.5; b = c + 2.5; }
      ctx.strokeStyle = COLL_COLOR; ctx.lineWidth = 2; /* 2 px outside the selection's outline */
      ctx.strokeRect(Math.max(a - 2, LABEL_W - 2), y - 1, Math.min(b + 2, self.W + 2) - Math.max(a - 2, LABEL_W - 2), SLICE_H + 1);
      ctx.lineWidth = 1;
      shown++;
    });
    this.el.setAttribute('data-coll-shown', String(shown));
    if (!s) return;
    var y = this.place(s);
    if (y === null) return;
    var L = s.row.lvs[s.level], a = this.X(L.ts[s.i]), b = this.X(L.end[s.i]);
    if (b < LABEL_W || a > this.W) return;
    if (b - a < 5) { var m = (a + b) / 2; a = m - 2.5; b = m + 2.5; }
    ctx.strokeStyle = SEL_COLOR; ctx.lineWidth = 2;
    ctx.strokeRect(Math.max(a, LABEL_W - 2), y + 0.5, Math.min(b, this.W + 2) - Math.max(a, LABEL_W - 2), SLICE_H - 2);
    ctx.lineWidth = 1;
    this.el.setAttribute('data-sel-x', Math.round((a + b) / 2) + ',' + Math.round(y + SLICE_H / 2));
  };

  P.drawCounter = function (row, y0, h) {
    var ctx = this.ctx, n = row.ts.length;
    if (!n || row.max <= 0) return;
    var i = Math.max(0, upperBound(row.ts, this.v0, 0, n) - 1), W = this.W;
    ctx.fillStyle = row.kind === 'memory' ? 'rgba(150,60,200,0.55)' : 'rgba(30,110,200,0.55)';
    ctx.beginPath(); ctx.moveTo(LABEL_W, y0 + h);
    var lastY = y0 + h;
    while (i < n && row.ts[i] < this.v1) {
      var x = Math.max(LABEL_W, this.X(row.ts[i])), px = Math.floor(x), vmax = row.val[i], j = i + 1;
      /* level of detail: the highest value per pixel column */
      var jEnd = lowerBound(row.ts, this.T(px + 1), j, n);
      for (; j < jEnd; j++) if (row.val[j] > vmax) vmax = row.val[j];
      var yy = y0 + h - (h - 2) * vmax / row.max;
      ctx.lineTo(x, lastY); ctx.lineTo(x, yy);
      lastY = yy;
      i = jEnd > i ? jEnd : i + 1;
    }
    ctx.lineTo(W, lastY); ctx.lineTo(W, y0 + h); ctx.closePath(); ctx.fill();
    ctx.fillStyle = '#333';
    ctx.fillText('max ' + counterValue(row, row.max), W - 120, y0 + 8);
  };

  /* A counter's value as a user reads it: bytes for memory rows and counters named in bytes,
   * whole numbers with thousands separators, other values to 4 significant digits. */
  function counterValue(row, v) {
    if (row.kind === 'memory' || /bytes/i.test(row.label || '')) return bytes(v);
    if (Number.isInteger(v) && Math.abs(v) < 1e15) return v.toLocaleString('en-US');
    return v.toPrecision(4);
  }

  P.drawRuler = function () {
    var ctx = this.ctx, W = this.W, tpp = (this.v1 - this.v0) / (W - LABEL_W);
    ctx.fillStyle = '#f4f4f4'; ctx.fillRect(0, 0, W, RULER_H);
    var raw = tpp * 100, p = Math.pow(10, Math.floor(Math.log10(raw))), step = p;
    if (raw / p > 5) step = 10 * p; else if (raw / p > 2) step = 5 * p; else if (raw / p > 1) step = 2 * p;
    /* at µs and ns zoom, offsets from an origin: the one chosen by a click on the ruler, else the
     * selected event's start, else a round time before the view */
    var org = null, labels = [];
    if (this.v1 - this.v0 < 2e6) {
      if (this.origin !== undefined && this.origin !== null) org = this.origin;
      else if (this.sel) org = this.sel.row.lvs[this.sel.level].ts[this.sel.i];
      else org = Math.floor(this.v0 / (10 * step)) * 10 * step;
      var xo = this.X(org);
      if (xo >= LABEL_W && xo <= W) {
        ctx.fillStyle = '#0030ff'; ctx.beginPath(); ctx.moveTo(xo - 5, RULER_H - 7); ctx.lineTo(xo + 5, RULER_H - 7);
        ctx.lineTo(xo, RULER_H); ctx.fill();
      }
    }
    ctx.fillStyle = '#444'; ctx.strokeStyle = '#bbb';
    var t0 = org === null ? Math.ceil(this.v0 / step) * step : org + Math.ceil((this.v0 - org) / step) * step;
    for (var t = t0; t < this.v1; t += step) {
      var x = this.X(t), lab;
      if (org === null) lab = fmtTick(t, step);
      else { var off = Math.round((t - org) / step) * step; lab = (off > 0 ? '+' : off < 0 ? '\u2212' : '') + fmtTick(Math.abs(off), step); }
      ctx.beginPath(); ctx.moveTo(x, RULER_H - 6); ctx.lineTo(x, RULER_H); ctx.stroke();
      ctx.fillText(lab, x + 2, 8);
      labels.push(lab);
    }
    ctx.fillStyle = '#f4f4f4'; ctx.fillRect(0, 0, LABEL_W, RULER_H);
    ctx.fillStyle = '#222';
    ctx.fillText(org === null ? 'view ' + fmt(this.v1 - this.v0) : 'from ' + fmtAbs(org) + ', view ' + fmt(this.v1 - this.v0), 6, 11);
    this.el.setAttribute('data-ruler', labels.join('|'));
    if (org === null) this.el.removeAttribute('data-ruler-origin'); else this.el.setAttribute('data-ruler-origin', String(org));
  };

  /* Where an event is drawn now (null when its track or level is not shown). */
  P.place = function (s) {
    for (var k = 0; k < this.items.length; k++) {
      var it = this.items[k];
      if (it.row === s.row) return s.level < it.shown ? it.y - this.scrollY + s.level * SLICE_H : null;
    }
    return null;
  };
  P.drawFlow = function () {
    var f = this.flow, ctx = this.ctx;
    if (!f) return;
    var a = f.from, b = f.to, ya = this.place(a), yb = this.place(b);
    if (ya === null || yb === null) return;
    var x0 = this.X(a.row.lvs[a.level].ts[a.i]), y0 = ya + SLICE_H / 2;
    var x1 = this.X(b.row.lvs[b.level].ts[b.i]), y1 = yb + SLICE_H / 2;
    ctx.strokeStyle = '#d00'; ctx.fillStyle = '#d00'; ctx.lineWidth = 1.5;
    ctx.beginPath(); ctx.moveTo(x0, y0);
    ctx.bezierCurveTo((x0 + x1) / 2, y0, (x0 + x1) / 2, y1, x1, y1); ctx.stroke();
    ctx.beginPath(); ctx.moveTo(x1, y1); ctx.lineTo(x1 - 7, y1 - 4); ctx.lineTo(x1 - 7, y1 + 4); ctx.fill();
    ctx.lineWidth = 1;
  };

  P.itemAt = function (y) {
    var yy = y + this.scrollY;
    for (var k = 0; k < this.items.length; k++) {
      var it = this.items[k];
      if (yy >= it.y && yy < it.y + it.h) return it;
    }
    return null;
  };
  /* The event under (x, y) as {row, level, i} (row.lvs: the levels it indexes). */
  P.hit = function (x, y) {
    if (x < LABEL_W || y < RULER_H) return null;
    var it = this.itemAt(y);
    if (!it || it.type !== 'track' || it.row.ts) return null;
    var row = it.row, d = Math.floor((y + this.scrollY - it.y) / SLICE_H);
    if (d >= it.shown) return null;
    var lv = this.levels(row), L = lv[d], t = this.T(x);
    if (!L) return null;
    var slack = 2 * (this.v1 - this.v0) / (this.W - LABEL_W); /* 2 px for sub-pixel events */
    var i = upperBound(L.ts, t + slack, 0, L.n) - 1;
    row.lvs = lv;
    if (i >= 0 && L.end[i] + slack >= t) return { row: row, level: d, i: i };
    return null;
  };
  /* The launch of a kernel or the kernel of a launch: same rank, same correlation number. */
  P.partner = function (s) {
    var L = s.row.lvs[s.level], corr = L.corr[s.i];
    if (!corr) return null;
    var wantGpu = !GPU_KINDS[this.kinds[L.kind[s.i]]];
    for (var r = 0; r < this.rows.length; r++) {
      var row = this.rows[r];
      if (row.ts || row.rank !== s.row.rank || (row.kind === 'gpu') !== wantGpu) continue;
      var lv = this.levels(row);
      for (var d = 0; d < lv.length; d++) {
        var M = lv[d];
        for (var i = 0; i < M.n; i++)
          if (M.corr[i] === corr) { row.lvs = lv; return { row: row, level: d, i: i }; }
      }
    }
    return null;
  };

  /* Delta-decodes a list of ids (0: none; d >= 0 written as d + 1; strings exact, restarting). */
  function decodeIds(a, step, off) {
    var out = [], p = 0;
    for (var i = off; i < a.length; i += step) {
      var v = a[i];
      if (typeof v === 'string') { out.push(v); p = 0; } else if (v) { p += v > 0 ? v - 1 : v; out.push(p); } else out.push(0);
    }
    return out;
  }
  /* The exact ids and arguments of an event, from the side script (parsed on first use): its
   * correlation id, External id, arguments and, by External id, the record_shapes args of its CPU
   * op (the op's own, or those of the op that launched a kernel). */
  P.args = function (s) {
    if (this.side === undefined) { /* after the page's scripts: absent until the parser is there */
      var src = document.getElementById(this.el.getAttribute('data-src') + '-args');
      if (!src) return null;
      try { this.side = JSON.parse(src.textContent); } catch (e) { this.side = null; }
      this.sideRows = []; this.corrIds = {}; this.opShapes = {};
      var side = this.side, self = this;
      if (side) (side.corr || []).forEach(function (c) { self.corrIds[c.r] = decodeIds(c.x, 1, 0); });
      if (side) (side.ops || []).forEach(function (c) {
        var m = new Map(), ids = decodeIds(c.x, 2, 0);
        for (var i = 0; i < ids.length; i++) m.set(String(ids[i]), c.x[2 * i + 1]);
        self.opShapes[c.r] = m;
      });
    }
    if (!this.side) return null;
    var ri = s.row.index, dec = this.sideRows[ri];
    if (!dec) {
      var a = this.side.rows[ri] || [];
      dec = this.sideRows[ri] = { x: decodeIds(a, 2, 0), a: a };
    }
    var L = s.row.lvs[s.level], k = L.idx[s.i], ai = dec.a[2 * k + 1], obj = ai ? this.side.args[ai - 1] : null;
    if (obj && obj.json) { try { obj = JSON.parse(obj.json); } catch (e) { /* keep the text */ } }
    var ids = this.corrIds[s.row.rank], ext = dec.x[k], ops = this.opShapes[s.row.rank], shapes = null;
    var si = ext && ops ? ops.get(String(ext)) : 0;
    if (si) {
      shapes = {};
      var so = this.side.args[si - 1];
      Object.keys(so).forEach(function (key) {
        if (key === 'op') { shapes.op = so.op; return; }
        try { shapes[key] = JSON.parse(so[key]); } catch (e) { shapes[key] = so[key]; }
      });
    }
    return { corr: L.corr[s.i] && ids ? ids[L.corr[s.i] - 1] : 0, ext: ext, args: obj, shapes: shapes };
  };
  function argText(v) {
    if (Array.isArray(v)) return '[' + v.map(argText).join(', ') + ']';
    if (v && typeof v === 'object') return JSON.stringify(v);
    return String(v);
  }

  /* A record_shapes value: like argText, with its strings quoted ("" stays visible). */
  function shapeText(v) {
    if (Array.isArray(v)) return '[' + v.map(shapeText).join(', ') + ']';
    return typeof v === 'string' ? JSON.stringify(v) : String(v);
  }

  /* The enclosing events of s, outermost first. */
  P.stack = function (s) {
    var out = [], lv = s.row.lvs, t = lv[s.level].ts[s.i];
    for (var d = 0; d < s.level; d++) {
      var L = lv[d], j = upperBound(L.ts, t, 0, L.n) - 1;
      if (j >= 0 && L.end[j] >= t) out.push(this.names[L.name[j]]);
    }
    return out;
  };

  P.showTip = function (h, cx, cy) {
    var tip = this.tip;
    if (!h) { tip.style.display = 'none'; tip.removeAttribute('data-name'); return; }
    var L = h.row.lvs[h.level], nm = this.names[L.name[h.i]], a = this.args(h);
    var lines = [this.kinds[L.kind[h.i]] + '  ' + fmt(L.end[h.i] - L.ts[h.i]) + '  at ' + fmt(L.ts[h.i])];
    if (a && a.args) {
      var g = a.args;
      if (g.grid) lines.push('grid ' + argText(g.grid) + '  block ' + argText(g.block));
      if (g['registers per thread'] !== undefined) lines.push('registers ' + g['registers per thread'] + '  shared memory ' + bytes(g['shared memory'] || 0));
      if (g['est. achieved occupancy %'] !== undefined) lines.push('occupancy ' + g['est. achieved occupancy %'] + ' %');
      if (g.bytes !== undefined) lines.push(bytes(g.bytes));
    }
    if (a && a.shapes) { /* the op's input shapes (record_shapes), shortened */
      var dims = a.shapes['Input Dims'] !== undefined ? shapeText(a.shapes['Input Dims']) : '';
      var own = this.kinds[L.kind[h.i]] === 'cpu_op', op = !own && a.shapes.op ? a.shapes.op + ' ' : '';
      if (dims || op) lines.push((own ? '' : 'op ') + op + (dims.length > 100 ? dims.slice(0, 99) + '\u2026' : dims));
    }
    tip.textContent = '';
    tip.appendChild(mk('b', '', nm.length > 160 ? nm.slice(0, 159) + '\u2026' : nm));
    lines.forEach(function (l) { tip.appendChild(mk('div', '', l)); });
    tip.setAttribute('data-name', nm);
    tip.style.display = 'block';
    var x = cx + 14, y = cy + 14;
    if (x + tip.offsetWidth > window.innerWidth - 4) x = Math.max(4, cx - tip.offsetWidth - 8);
    if (y + tip.offsetHeight > window.innerHeight - 4) y = Math.max(4, cy - tip.offsetHeight - 8);
    tip.style.left = x + 'px'; tip.style.top = y + 'px';
  };

  /* The collective (1 + its index in D.colls) of event s, 0 when it is none. */
  P.collOf = function (s) {
    var L = s && s.row.lvs[s.level];
    return L && L.coll ? L.coll[s.i] : 0;
  };
  /* Every member kernel of collective co, on every rank, as {row, level, i} (row.lvs set). */
  P.members = function (co) {
    var out = [];
    for (var r = 0; r < this.rows.length; r++) {
      var row = this.rows[r];
      if (!row.coll) continue;
      var lv = this.levels(row);
      for (var d = 0; d < lv.length; d++) {
        var L = lv[d];
        if (!L.coll) continue;
        for (var i = 0; i < L.n; i++) if (L.coll[i] === co) { row.lvs = lv; out.push({ row: row, level: d, i: i }); }
      }
    }
    return out;
  };

  P.select = function (s) {
    this.sel = s; this.flow = null;
    var co = this.collOf(s);
    this.collMembers = co ? this.members(co) : [];
    var det = this.details, self = this;
    if (det) det.removeAttribute('data-unmatched');
    if (!s) { if (det) { det.textContent = 'Click an event for its details.'; det.removeAttribute('data-selected'); } this.draw(); return; }
    var L = s.row.lvs[s.level], i = s.i, p = this.partner(s), a = this.args(s), nm = this.names[L.name[i]];
    if (p) this.flow = s.row.kind === 'gpu' ? { from: p, to: s } : { from: s, to: p };
    this.draw();
    if (!det) return;
    det.textContent = '';
    det.appendChild(mk('b', 'gp-tl-name', nm));
    var t = mk('table', 'gp-tl-args');
    function kv(k, v) { var tr = mk('tr'); tr.appendChild(mk('th', '', k)); tr.appendChild(mk('td', '', v)); t.appendChild(tr); }
    kv('kind', this.kinds[L.kind[i]]);
    kv('track', (this.multi ? 'rank ' + s.row.rank + ' \u00b7 ' : '') + s.row.label);
    kv('start', fmt(L.ts[i]));
    kv('duration', fmt(L.end[i] - L.ts[i]));
    var co = this.collOf(s);
    if (co) {
      var C = this.D.colls[co - 1], mem = this.collMembers;
      kv('collective', C[0] + ' #' + C[2] + ' of group ' + C[1] + ', ' + C[3] + ' ranks' + (C[6] ? '' : ' (not trusted: incomplete or mismatched)') +
         ', latency ' + fmt(C[4]) + ', start skew ' + fmt(C[5]));
      kv('on the ranks', mem.map(function (m) {
        var M = m.row.lvs[m.level];
        return 'rank ' + m.row.rank + ' starts ' + (M.ts[m.i] >= L.ts[i] ? '+' : '\u2212') + fmt(Math.abs(M.ts[m.i] - L.ts[i])) + ', ' + fmt(M.end[m.i] - M.ts[m.i]);
      }).join('\n'));
      det.setAttribute('data-coll', String(co));
    } else det.removeAttribute('data-coll');
    if (a && a.corr) kv('correlation', String(a.corr));
    if (a && a.ext) kv('External id', String(a.ext));
    if (a && a.args) Object.keys(a.args).forEach(function (k) { kv(k, argText(a.args[k])); });
    /* the op's Input Dims, Input type, ...: the event's own for a CPU op, else its op's */
    var own = this.kinds[L.kind[i]] === 'cpu_op';
    if (a && a.shapes) Object.keys(a.shapes).forEach(function (k) {
      if (k === 'op') { if (!own) kv('op', a.shapes.op); } else kv((own ? '' : 'op ') + k, shapeText(a.shapes[k]));
    });
    var st = this.stack(s);
    if (st.length) kv('stack', st.join('\n'));
    det.appendChild(t);
    if (p) {
      var M = p.row.lvs[p.level], isGpu = s.row.kind === 'gpu';
      var line = mk('div', 'gp-tl-flow', (isGpu ? 'launched by ' : 'launches ') + this.names[M.name[p.i]] + ' on ' +
        p.row.label + '   launch-to-start ' + fmt(isGpu ? L.ts[i] - M.ts[p.i] : M.ts[p.i] - L.ts[i]) + ' ');
      var go = mk('button', '', isGpu ? 'go to launch' : 'go to kernel');
      go.id = this.id + '-goto';
      go.addEventListener('click', function () { self.reveal(p, false); self.selText = self.names[M.name[p.i]]; self.select(p); self.saveState(); });
      line.appendChild(go);
      det.appendChild(line);
    }
    det.setAttribute('data-selected', nm);
  };

  /* Makes s visible: expands its rank and track, scrolls to it, and centres the view on it,
   * zooming in when fit is set, when it is wider than the view or narrower than 2 px; fit
   * 'frame' zooms it to fill the view. */
  P.reveal = function (s, fit) {
    var L = s.row.lvs[s.level], t0 = L.ts[s.i], t1 = L.end[s.i], w = this.v1 - this.v0;
    this.rankCollapsed[s.row.rank] = false;
    if (this.rankFilter >= 0 && this.rankFilter !== s.row.rank) this.rankFilter = -1;
    s.row.collapsed = false;
    if (s.row.maxLevels <= s.level) s.row.maxLevels = s.level + 1;
    /* zoom when asked, when it is wider than the view or narrower than 2 px of it; 'frame': the
     * event fills most of the view (the F key) */
    if (fit === 'frame') w = Math.max((t1 - t0) * 1.25, MIN_VIEW);
    else if (fit || t1 - t0 > w || (t1 - t0) * (this.W - LABEL_W) < 2 * w) w = Math.max(20 * (t1 - t0), 20000);
    this.setView((t0 + t1) / 2 - w / 2, (t0 + t1) / 2 + w / 2);
    this.layout();
    var y = this.place(s);
    if (y !== null) {
      var abs = y + this.scrollY;
      if (abs - this.scrollY < RULER_H + 10 || abs - this.scrollY > this.H - 40) this.scrollTo(abs - this.H / 3);
    }
    this.refresh();
  };
  P.scrollTo = function (y) {
    this.spacer.style.height = Math.max(0, this.contentH - this.H) + 'px';
    this.el.scrollTop = Math.max(0, y);
    this.scrollY = this.el.scrollTop;
  };

  /* Search: every event whose name contains the text (case-insensitive), in time order. */
  P.doSearch = function (text) {
    this.matches = []; this.matchIdx = -1; this.matchNames = null; this.searchGen = (this.searchGen || 0) + 1;
    var cnt = this.count;
    if (!text) { cnt.textContent = ''; cnt.setAttribute('data-count', '0'); this.draw(); return; }
    var q = text.toLowerCase(), hit = new Uint8Array(this.names.length), any = false, total = 0;
    for (var k = 0; k < this.names.length; k++) if (this.names[k].toLowerCase().indexOf(q) >= 0) { hit[k] = 1; any = true; }
    var list = [];
    if (any) for (var r = 0; r < this.rows.length; r++) {
      var row = this.rows[r];
      if (row.ts) continue;
      var lv = this.levels(row);
      for (var d = 0; d < lv.length; d++) {
        var L = lv[d], hs = [];
        for (var i = 0; i < L.n; i++) if (hit[L.name[i]]) {
          total++; hs.push(i);
          if (list.length < 200000) list.push({ row: row, level: d, i: i, t: L.ts[i], lvs: lv });
        }
        L.hits = new Int32Array(hs); L.hitGen = this.searchGen;
      }
    }
    list.sort(function (a, b) { return a.t - b.t; });
    this.matches = list; this.matchNames = hit;
    cnt.textContent = total ? total + ' match' + (total > 1 ? 'es' : '') : 'no match';
    cnt.setAttribute('data-count', String(total));
    cnt.setAttribute('data-index', '0');
    this.draw();
  };
  P.step = function (dir) {
    if (!this.matches || !this.matches.length) return;
    var n = this.matches.length;
    this.matchIdx = this.matchIdx < 0 ? (dir > 0 ? 0 : n - 1) : (this.matchIdx + dir + n) % n;
    var m = this.matches[this.matchIdx], s = { row: m.row, level: m.level, i: m.i };
    m.row.lvs = m.lvs;
    this.reveal(s, false);
    this.select(s);
    this.count.textContent = (this.matchIdx + 1) + ' of ' + this.count.getAttribute('data-count');
    this.count.setAttribute('data-index', String(this.matchIdx + 1));
    this.count.setAttribute('data-match-ts', String(m.t));
  };

  /* The area selection: per (name, kind) over the tracks it spans, the events overlapping the
   * range, their total time clipped to it and their self time (total minus the clipped time of
   * the events nested in them). */
  P.aggregate = function () {
    var A = this.area, agg = this.agg;
    if (!A || !agg) return;
    var t0 = Math.min(A.t0, A.t1), t1 = Math.max(A.t0, A.t1), y0 = Math.min(A.y0, A.y1), y1 = Math.max(A.y0, A.y1);
    var acc = {}, tracks = 0, self = this;
    this.items.forEach(function (it) {
      if (it.type !== 'track' || it.row.ts || it.y + it.h <= y0 || it.y >= y1) return;
      tracks++;
      var lv = self.levels(it.row), parentOf = [];
      for (var d = 0; d < lv.length; d++) {
        var L = lv[d], i = upperBound(L.end, t0, 0, L.n);
        for (; i < L.n && L.ts[i] < t1; i++) {
          var c = Math.min(L.end[i], t1) - Math.max(L.ts[i], t0), key = L.name[i] * 16 + L.kind[i];
          var e = acc[key] || (acc[key] = { name: L.name[i], kind: L.kind[i], count: 0, total: 0, self: 0 });
          e.count++; e.total += c; e.self += c;
          if (d > 0) {
            var Q = lv[d - 1], j = upperBound(Q.ts, L.ts[i], 0, Q.n) - 1;
            if (j >= 0 && Q.end[j] > L.ts[i]) { var pk = Q.name[j] * 16 + Q.kind[j]; if (acc[pk]) acc[pk].self -= Math.min(c, Math.min(Q.end[j], t1) - Math.max(Q.ts[j], t0)); }
          }
        }
      }
      parentOf = null;
    });
    var list = Object.keys(acc).map(function (k) { return acc[k]; });
    list.sort(function (a, b) { return b.total - a.total; });
    agg.textContent = '';
    agg.appendChild(mk('b', '', 'Selection ' + fmt(t1 - t0) + ' on ' + tracks + ' track' + (tracks === 1 ? '' : 's') + ': ' + list.length + ' names'));
    var close = mk('button', '', 'clear');
    close.addEventListener('click', function () { self.area = null; agg.textContent = ''; agg.removeAttribute('data-rows'); self.draw(); });
    agg.appendChild(document.createTextNode(' ')); agg.appendChild(close);
    var t = mk('table', 'gp-tl-aggt'), hd = mk('tr');
    ['name', 'kind', 'count', 'total', 'self', 'mean'].forEach(function (h) { hd.appendChild(mk('th', '', h)); });
    t.appendChild(hd);
    var sumCount = 0;
    list.slice(0, 300).forEach(function (e) {
      var tr = mk('tr');
      tr.appendChild(mk('td', 'gp-name', self.names[e.name]));
      tr.appendChild(mk('td', '', self.kinds[e.kind]));
      tr.appendChild(mk('td', 'gp-num', String(e.count)));
      tr.appendChild(mk('td', 'gp-num', fmt(e.total)));
      tr.appendChild(mk('td', 'gp-num', fmt(Math.max(0, e.self))));
      tr.appendChild(mk('td', 'gp-num', fmt(e.total / e.count)));
      t.appendChild(tr);
    });
    list.forEach(function (e) { sumCount += e.count; });
    agg.appendChild(t);
    agg.setAttribute('data-rows', String(list.length));
    agg.setAttribute('data-events', String(sumCount));
  };

  /* The first event (tracks in order) whose name contains text. */
  P.find = function (text) {
    for (var r = 0; r < this.rows.length; r++) {
      var row = this.rows[r];
      if (row.ts) continue;
      var lv = this.levels(row);
      for (var d = 0; d < lv.length; d++) {
        var L = lv[d];
        for (var i = 0; i < L.n; i++)
          if (this.names[L.name[i]].indexOf(text) >= 0) { row.lvs = lv; return { row: row, level: d, i: i }; }
      }
    }
    return null;
  };
  /* View state in the URL fragment: #t0=NS&t1=NS (view, ns from the trace start) and
   * #sel=TEXT (select the first event whose name contains TEXT, centred). */
  P.saveState = function () {
    if (this.el.id !== 'gp-tl') return;
    var h = '#t0=' + Math.round(this.v0) + '&t1=' + Math.round(this.v1);
    if (this.selText) h += '&sel=' + encodeURIComponent(this.selText);
    this.lastHash = h;
    try { history.replaceState(null, '', h); } catch (e) { /* file: quirks */ }
  };
  P.loadState = function () {
    var st = {};
    if (location.hash === this.lastHash) return;
    location.hash.replace(/^#/, '').split('&').forEach(function (kv) {
      var j = kv.indexOf('=');
      if (j > 0) st[kv.slice(0, j)] = decodeURIComponent(kv.slice(j + 1));
    });
    if (st.t0 !== undefined && st.t1 !== undefined && +st.t1 > +st.t0) this.setView(+st.t0, +st.t1);
    if (st.sel) {
      var s = this.find(st.sel);
      if (s) {
        if (st.t0 === undefined) this.reveal(s, true);
        else this.reveal(s, false);
        this.selText = st.sel;
        this.select(s);
        if (this.flow) {
          var other = this.flow.from === s ? this.flow.to : this.flow.from, ya = this.place(s), yb = this.place(other);
          if (ya !== null && yb !== null) this.scrollTo(Math.min(ya, yb) + this.scrollY - 40);
        }
      } else if (this.details) { /* say so rather than show nothing */
        this.select(null);
        this.details.textContent = 'No event matches \u201c' + st.sel + '\u201d (from the link).';
        this.details.setAttribute('data-unmatched', st.sel);
      }
    }
    this.refresh();
  };

  /* The view [a, b) clamped to the trace: never wider than it, never past either end. */
  P.setView = function (a, b) {
    var w = Math.min(Math.max(b - a, MIN_VIEW), this.span);
    a = Math.max(0, Math.min(a, this.span - w));
    this.v0 = a; this.v1 = a + w;
  };
  P.zoomAt = function (x, factor) {
    var t = this.T(Math.max(x, LABEL_W)), w = (this.v1 - this.v0) * factor;
    var f = (t - this.v0) / (this.v1 - this.v0);
    this.setView(t - f * w, t - f * w + w);
    this.draw();
    this.saveState();
  };
  P.pan = function (dx) {
    var dt = dx * (this.v1 - this.v0) / (this.W - LABEL_W);
    this.setView(this.v0 - dt, this.v1 - dt); this.draw();
  };
  P.clickLabel = function (y) {
    var it = this.itemAt(y);
    if (!it) return;
    if (it.type === 'rank') this.rankCollapsed[it.rank] = !it.collapsed;
    else if (!it.row.ts) {
      var yy = y + this.scrollY - it.y;
      if (it.more > 0 && !it.row.collapsed && yy >= it.shown * SLICE_H) it.row.maxLevels = 255;
      else if (it.total > 1 || it.row.collapsed) it.row.collapsed = !it.row.collapsed;
    }
    this.refresh();
  };
  P.bind = function () {
    var self = this, c = this.canvas, el = this.el, down = null;
    el.addEventListener('scroll', function () {
      self.scrollY = el.scrollTop; self.draw();
      var m = self.mouse; /* the tooltip follows: what is under the pointer now */
      if (m) { var r = c.getBoundingClientRect(); self.showTip(self.hit(m.x - r.left, m.y - r.top), m.x, m.y); }
    });
    el.addEventListener('wheel', function (ev) {
      var r = c.getBoundingClientRect();
      if (ev.ctrlKey || ev.metaKey) { ev.preventDefault(); self.zoomAt(ev.clientX - r.left, Math.exp(ev.deltaY * 0.002)); }
      else if (ev.shiftKey || Math.abs(ev.deltaX) > Math.abs(ev.deltaY)) { ev.preventDefault(); self.pan(-(ev.deltaX || ev.deltaY)); }
    }, { passive: false });
    c.addEventListener('mousedown', function (ev) {
      var r = c.getBoundingClientRect(), x = ev.clientX - r.left, y = ev.clientY - r.top;
      el.focus({ preventScroll: true });
      if (x < LABEL_W) { self.clickLabel(y); return; }
      if (y < RULER_H) { /* the ruler's origin here; a click on it clears it */
        var o = self.origin, near = o !== undefined && o !== null && Math.abs(self.X(o) - x) < 5;
        self.origin = near ? null : self.T(x);
        self.draw(); ev.preventDefault(); return;
      }
      down = { x: x, y: y, lastX: ev.clientX, moved: false, shift: ev.shiftKey };
      if (down.shift) self.area = { t0: self.T(x), t1: self.T(x), y0: y + self.scrollY, y1: y + self.scrollY };
      c.classList.add('gp-drag');
      ev.preventDefault();
    });
    c.addEventListener('mousemove', function (ev) {
      self.mouse = { x: ev.clientX, y: ev.clientY };
      if (down) return;
      var r = c.getBoundingClientRect();
      self.showTip(self.hit(ev.clientX - r.left, ev.clientY - r.top), ev.clientX, ev.clientY);
    });
    c.addEventListener('mouseleave', function () { self.mouse = null; self.showTip(null); });
    window.addEventListener('mousemove', function (ev) {
      if (!down) return;
      var r = c.getBoundingClientRect();
      if (Math.abs(ev.clientX - r.left - down.x) > 3) down.moved = true;
      if (down.shift) { self.area.t1 = self.T(ev.clientX - r.left); self.area.y1 = ev.clientY - r.top + self.scrollY; self.draw(); }
      else { self.pan(ev.clientX - down.lastX); }
      down.lastX = ev.clientX;
    });
    window.addEventListener('mouseup', function () {
      if (!down) return;
      c.classList.remove('gp-drag');
      if (down.shift) { if (down.moved) self.aggregate(); else { self.area = null; self.draw(); } }
      else if (!down.moved) {
        var h = self.hit(down.x, down.y);
        self.selText = h ? self.names[h.row.lvs[h.level].name[h.i]] : '';
        self.select(h);
      }
      down = null;
      self.saveState();
    });
    el.tabIndex = 0;
    /* keys act on the page's timeline wherever the focus is, except in a text field */
    (el.id === 'gp-tl' ? document : el).addEventListener('keydown', function (ev) {
      var tg = ev.target && ev.target.tagName;
      if (ev.ctrlKey || ev.metaKey || ev.altKey || (tg === 'INPUT' && ev.target.type !== 'checkbox') || tg === 'SELECT' || tg === 'TEXTAREA') return;
      var k = ev.key.toLowerCase(), mid = (LABEL_W + self.W) / 2;
      if (k === 'w') self.zoomAt(mid, 0.8);
      else if (k === 's') self.zoomAt(mid, 1.25);
      else if (k === 'a') self.pan(100);
      else if (k === 'd') self.pan(-100);
      else if (k === '0') { self.setView(0, self.span); self.draw(); self.saveState(); }
      else if (k === 'f' && self.sel) { self.reveal(self.sel, 'frame'); self.saveState(); }
      else return;
      ev.preventDefault();
    });
    window.addEventListener('resize', function () { self.resize(); });
    if (el.id === 'gp-tl') window.addEventListener('hashchange', function () { self.loadState(); });
  };

  var els = document.querySelectorAll('.gp-tl[data-src]'), all = [], tParse = 0, tBuild = 0;
  for (var k = 0; k < els.length; k++) {
    var src = document.getElementById(els[k].getAttribute('data-src'));
    var t0 = performance.now(), data = JSON.parse(src.textContent), t1 = performance.now();
    var tl = new Timeline(els[k], data);
    tParse += t1 - t0; tBuild += performance.now() - t1;
    if (els[k].id === 'gp-tl' && location.hash) tl.loadState();
    all.push(tl);
  }
  window.gpTimelines = all;
  /* the arguments script comes after this one: a selection made from the link shows them once
   * it is there */
  if (document.readyState === 'loading')
    document.addEventListener('DOMContentLoaded', function () {
      all.forEach(function (tl) { if (tl.sel) { var f = tl.flow; tl.select(tl.sel); if (f) tl.flow = f; tl.draw(); } });
    });
  var root = document.documentElement;
  /* where the time to first paint goes (read by bench/report) */
  root.setAttribute('data-parse-ms', String(Math.round(tParse)));
  root.setAttribute('data-build-draw-ms', String(Math.round(tBuild)));
  if (!root.hasAttribute('data-wait')) {
    root.setAttribute('data-first-paint-ms', String(Math.round(performance.now())));
    root.setAttribute('data-ready', '1');
  }
})();
