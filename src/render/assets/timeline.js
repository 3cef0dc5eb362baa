/* gpuprof timeline: draws the rows of a trace on a canvas with level of detail, so a million
 * events stay smooth. Data (made by timeline_html.c) is delta-encoded per row:
 *   slice rows  "e": [dts, dur, name, depth*16+kind, corr, ...]   (5 numbers per event)
 *   counter rows "c": [dts, value, ...]
 * dts is the start minus the previous start in the row (the first: minus the trace start); corr is
 * 0 (none), or the correlation id minus the previous non-zero one, plus 1 when >= 0.
 * Each slice row is split by depth into levels; within a level events never overlap, so both
 * starts and ends are sorted and a binary search finds the first visible event. An event narrower
 * than a pixel is drawn as one pixel column and the walk jumps to the next column (binary search),
 * so the cost per level is bounded by the pixels, not by the events.
 * Any element with class "gp-tl" and data-src="<id of a JSON script>" becomes a timeline. */
(function () {
  'use strict';
  var LABEL_W = 210, SLICE_H = 16, COUNTER_H = 40, RULER_H = 22, GAP = 6;
  var GPU_KINDS = { kernel: 1, gpu_memcpy: 1, gpu_memset: 1, cuda_sync: 1, gpu_user_annotation: 1 };

  function lowerBound(a, v, lo, hi) { /* first i in [lo,hi) with a[i] >= v */
    while (lo < hi) { var m = (lo + hi) >>> 1; if (a[m] < v) lo = m + 1; else hi = m; }
    return lo;
  }
  function upperBound(a, v, lo, hi) { /* first i in [lo,hi) with a[i] > v */
    while (lo < hi) { var m = (lo + hi) >>> 1; if (a[m] <= v) lo = m + 1; else hi = m; }
    return lo;
  }
  function fmt(ns) {
    var a = Math.abs(ns);
    if (a >= 1e9) return (ns / 1e9).toFixed(3) + ' s';
    if (a >= 1e6) return (ns / 1e6).toFixed(3) + ' ms';
    if (a >= 1e3) return (ns / 1e3).toFixed(3) + ' us';
    return Math.round(ns) + ' ns';
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

  function decode(D) {
    var rows = [], y = RULER_H;
    D.rows.forEach(function (r) {
      var row = { label: r.l, kind: r.k, rank: r.r, y: y };
      if (r.e) {
        var e = r.e, n = e.length / 5, nd = r.d + 1, counts = new Int32Array(nd), i, t = 0, c = 0;
        for (i = 0; i < n; i++) counts[e[i * 5 + 3] >> 4]++;
        var lv = [];
        for (var d = 0; d < nd; d++) {
          var m = counts[d];
          lv.push({ n: 0, ts: new Float64Array(m), end: new Float64Array(m), name: new Int32Array(m),
                    kind: new Uint8Array(m), corr: new Float64Array(m) });
        }
        for (i = 0; i < n; i++) {
          var b = i * 5, L = lv[e[b + 3] >> 4], k = L.n++, cv = e[b + 4];
          t += e[b];
          L.ts[k] = t; L.end[k] = t + e[b + 1]; L.name[k] = e[b + 2]; L.kind[k] = e[b + 3] & 15;
          if (cv !== 0) { c += cv > 0 ? cv - 1 : cv; L.corr[k] = c; } else L.corr[k] = 0;
        }
        row.levels = lv;
        row.h = nd * SLICE_H;
      } else {
        var s = r.c || [], ns = s.length / 2, ts = new Float64Array(ns), val = new Float64Array(ns),
            tt = 0, max = 0;
        for (var j = 0; j < ns; j++) {
          tt += s[2 * j]; ts[j] = tt; val[j] = s[2 * j + 1] || 0;
          if (val[j] > max) max = val[j];
        }
        row.ts = ts; row.val = val; row.max = max; row.h = COUNTER_H;
      }
      y += row.h + GAP;
      rows.push(row);
    });
    return { rows: rows, height: y };
  }

  function Timeline(el, D) {
    this.el = el; this.D = D;
    var dec = decode(D);
    this.rows = dec.rows; this.contentH = dec.height;
    this.names = D.names; this.kinds = D.kinds;
    this.span = Math.max(1, D.span);
    this.v0 = 0; this.v1 = this.span; this.scrollY = 0;
    this.sel = null; this.flow = null; this.measure = null;
    this.colors = {};
    this.canvas = document.createElement('canvas');
    el.appendChild(this.canvas);
    this.details = document.getElementById(el.id + '-details');
    this.bind();
    this.resize();
  }
  var P = Timeline.prototype;

  P.resize = function () {
    var r = window.devicePixelRatio || 1, w = this.el.clientWidth, h = this.el.clientHeight;
    this.W = w; this.H = h;
    this.canvas.width = Math.round(w * r); this.canvas.height = Math.round(h * r);
    this.canvas.style.width = w + 'px'; this.canvas.style.height = h + 'px';
    this.ctx = this.canvas.getContext('2d');
    this.ctx.setTransform(r, 0, 0, r, 0, 0);
    this.draw();
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
    var ctx = this.ctx, W = this.W, H = this.H, self = this;
    ctx.clearRect(0, 0, W, H);
    ctx.font = '11px "DejaVu Sans", Verdana, sans-serif';
    ctx.textBaseline = 'middle';
    var tpp = (this.v1 - this.v0) / (W - LABEL_W); /* ns per pixel */
    this.rows.forEach(function (row) {
      var y = row.y - self.scrollY;
      if (y + row.h < RULER_H || y > H) return;
      if (row.levels) self.drawSlices(row, y, tpp); else self.drawCounter(row, y, tpp);
    });
    /* labels over the left column */
    ctx.fillStyle = '#fff'; ctx.fillRect(0, 0, LABEL_W, H);
    ctx.fillStyle = '#222';
    this.rows.forEach(function (row) {
      var y = row.y - self.scrollY;
      if (y + row.h < RULER_H || y > H) return;
      ctx.fillStyle = row.kind === 'gpu' ? '#1a6b1a' : row.kind === 'cpu' ? '#7a3b00' : '#333';
      ctx.fillText(row.label.length > 32 ? row.label.slice(0, 31) + '..' : row.label, 6, y + 8);
      ctx.strokeStyle = '#eee'; ctx.beginPath(); ctx.moveTo(0, y + row.h + GAP / 2);
      ctx.lineTo(W, y + row.h + GAP / 2); ctx.stroke();
    });
    this.drawFlow();
    this.drawRuler(tpp);
    if (this.measure) {
      var a = this.X(Math.min(this.measure[0], this.measure[1])), b = this.X(Math.max(this.measure[0], this.measure[1]));
      ctx.fillStyle = 'rgba(30,100,255,0.12)'; ctx.fillRect(a, RULER_H, b - a, H);
      ctx.fillStyle = '#124'; ctx.fillText(fmt(Math.abs(this.measure[1] - this.measure[0])), a + 4, RULER_H + 10);
    }
  };

  P.drawSlices = function (row, y0, tpp) {
    var ctx = this.ctx, v0 = this.v0, v1 = this.v1, sel = this.sel;
    for (var d = 0; d < row.levels.length; d++) {
      var L = row.levels[d], n = L.n, y = y0 + d * SLICE_H;
      if (y + SLICE_H < RULER_H || y > this.H) continue;
      var i = upperBound(L.end, v0, 0, n);
      while (i < n && L.ts[i] < v1) {
        var x0 = this.X(L.ts[i]), x1 = this.X(L.end[i]);
        if (x0 < LABEL_W) x0 = LABEL_W;
        ctx.fillStyle = this.color(L.name[i], L.kind[i]);
        if (x1 - x0 < 1) {
          var px = Math.floor(x0);
          ctx.fillRect(px, y, 1, SLICE_H - 1);
          var j = lowerBound(L.ts, this.T(px + 1), i + 1, n);
          i = j > i ? j : i + 1;
          continue;
        }
        ctx.fillRect(x0, y, x1 - x0, SLICE_H - 1);
        if (x1 - x0 > 30) {
          var nm = this.names[L.name[i]], fit = Math.floor((x1 - x0 - 6) / 6.2);
          if (fit >= 3) {
            ctx.fillStyle = '#000';
            ctx.fillText(nm.length > fit ? nm.slice(0, fit - 2) + '..' : nm, x0 + 3, y + 8);
          }
        }
        if (sel && sel.row === row && sel.level === d && sel.i === i) {
          ctx.strokeStyle = '#000'; ctx.lineWidth = 2; ctx.strokeRect(x0, y, x1 - x0, SLICE_H - 1); ctx.lineWidth = 1;
        }
        i++;
      }
    }
  };

  P.drawCounter = function (row, y0, tpp) {
    var ctx = this.ctx, n = row.ts.length;
    if (!n || row.max <= 0) return;
    var i = Math.max(0, upperBound(row.ts, this.v0, 0, n) - 1), W = this.W;
    ctx.fillStyle = row.kind === 'memory' ? 'rgba(150,60,200,0.55)' : 'rgba(30,110,200,0.55)';
    ctx.beginPath(); ctx.moveTo(LABEL_W, y0 + row.h);
    var lastX = LABEL_W, lastY = y0 + row.h;
    while (i < n && row.ts[i] < this.v1) {
      var x = Math.max(LABEL_W, this.X(row.ts[i])), px = Math.floor(x), vmax = row.val[i], j = i + 1;
      /* level of detail: the highest value per pixel column */
      var jEnd = lowerBound(row.ts, this.T(px + 1), j, n);
      for (; j < jEnd; j++) if (row.val[j] > vmax) vmax = row.val[j];
      var yy = y0 + row.h - (row.h - 2) * vmax / row.max;
      ctx.lineTo(x, lastY); ctx.lineTo(x, yy);
      lastX = x; lastY = yy;
      i = jEnd > i ? jEnd : i + 1;
    }
    ctx.lineTo(W, lastY); ctx.lineTo(W, y0 + row.h); ctx.closePath(); ctx.fill();
    ctx.fillStyle = '#333';
    ctx.fillText('max ' + (row.kind === 'memory' ? bytes(row.max) : row.max.toPrecision(4)), W - 110, y0 + 8);
  };

  P.drawRuler = function (tpp) {
    var ctx = this.ctx, W = this.W;
    ctx.fillStyle = '#f4f4f4'; ctx.fillRect(0, 0, W, RULER_H);
    var raw = tpp * 100, p = Math.pow(10, Math.floor(Math.log10(raw))), step = p;
    if (raw / p > 5) step = 10 * p; else if (raw / p > 2) step = 5 * p; else if (raw / p > 1) step = 2 * p;
    ctx.fillStyle = '#444'; ctx.strokeStyle = '#bbb';
    for (var t = Math.ceil(this.v0 / step) * step; t < this.v1; t += step) {
      var x = this.X(t);
      ctx.beginPath(); ctx.moveTo(x, RULER_H - 6); ctx.lineTo(x, RULER_H); ctx.stroke();
      ctx.fillText(fmt(t), x + 2, 8);
    }
    ctx.fillStyle = '#222'; ctx.fillText('view ' + fmt(this.v1 - this.v0), 6, 8);
  };

  P.levelY = function (row, d) { return row.y - this.scrollY + d * SLICE_H; };
  P.drawFlow = function () {
    var f = this.flow, ctx = this.ctx;
    if (!f) return;
    var a = f.from, b = f.to;
    var x0 = this.X(a.row.levels[a.level].ts[a.i]), y0 = this.levelY(a.row, a.level) + SLICE_H / 2;
    var x1 = this.X(b.row.levels[b.level].ts[b.i]), y1 = this.levelY(b.row, b.level) + SLICE_H / 2;
    ctx.strokeStyle = '#d00'; ctx.fillStyle = '#d00'; ctx.lineWidth = 1.5;
    ctx.beginPath(); ctx.moveTo(x0, y0);
    ctx.bezierCurveTo((x0 + x1) / 2, y0, (x0 + x1) / 2, y1, x1, y1); ctx.stroke();
    ctx.beginPath(); ctx.moveTo(x1, y1); ctx.lineTo(x1 - 7, y1 - 4); ctx.lineTo(x1 - 7, y1 + 4); ctx.fill();
    ctx.lineWidth = 1;
  };

  P.hit = function (x, y) {
    if (x < LABEL_W || y < RULER_H) return null;
    var t = this.T(x), yy = y + this.scrollY;
    for (var r = 0; r < this.rows.length; r++) {
      var row = this.rows[r];
      if (!row.levels || yy < row.y || yy >= row.y + row.h) continue;
      var d = Math.floor((yy - row.y) / SLICE_H), L = row.levels[d];
      if (!L) return null;
      var slack = 2 * (this.v1 - this.v0) / (this.W - LABEL_W); /* 2 px for sub-pixel events */
      var i = upperBound(L.ts, t + slack, 0, L.n) - 1;
      if (i >= 0 && L.end[i] + slack >= t) return { row: row, level: d, i: i };
      return null;
    }
    return null;
  };
  /* The launch of a kernel or the kernel of a launch: same rank, same correlation id. */
  P.partner = function (s) {
    var L = s.row.levels[s.level], corr = L.corr[s.i];
    if (!corr) return null;
    var wantGpu = !GPU_KINDS[this.kinds[L.kind[s.i]]];
    for (var r = 0; r < this.rows.length; r++) {
      var row = this.rows[r];
      if (!row.levels || row.rank !== s.row.rank || (row.kind === 'gpu') !== wantGpu) continue;
      for (var d = 0; d < row.levels.length; d++) {
        var M = row.levels[d];
        for (var i = 0; i < M.n; i++)
          if (M.corr[i] === corr) return { row: row, level: d, i: i };
      }
    }
    return null;
  };
  P.select = function (s) {
    this.sel = s; this.flow = null;
    if (!s) { if (this.details) this.details.textContent = 'Click an event for its details.'; this.draw(); return; }
    var L = s.row.levels[s.level], i = s.i, p = this.partner(s);
    var txt = this.names[L.name[i]] + '\n' + 'kind ' + this.kinds[L.kind[i]] + '   row ' + s.row.label +
      '\nstart ' + fmt(L.ts[i]) + '   duration ' + fmt(L.end[i] - L.ts[i]) +
      (L.corr[i] ? '   correlation ' + L.corr[i] : '');
    if (p) {
      var M = p.row.levels[p.level], isGpu = s.row.kind === 'gpu';
      txt += '\n' + (isGpu ? 'launched by ' : 'launches ') + this.names[M.name[p.i]] + ' on ' + p.row.label +
        (isGpu ? '   launch-to-start ' + fmt(L.ts[i] - M.ts[p.i]) : '   launch-to-start ' + fmt(M.ts[p.i] - L.ts[i]));
      this.flow = isGpu ? { from: p, to: s } : { from: s, to: p };
    }
    if (this.details) {
      this.details.textContent = txt;
      this.details.setAttribute('data-selected', this.names[L.name[i]]);
    }
    this.draw();
  };

  /* The first event (in row order) whose name contains text. */
  P.find = function (text) {
    for (var r = 0; r < this.rows.length; r++) {
      var row = this.rows[r];
      if (!row.levels) continue;
      for (var d = 0; d < row.levels.length; d++) {
        var L = row.levels[d];
        for (var i = 0; i < L.n; i++)
          if (this.names[L.name[i]].indexOf(text) >= 0) return { row: row, level: d, i: i };
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
    try { history.replaceState(null, '', h); } catch (e) { /* file: quirks */ }
  };
  P.loadState = function () {
    var st = {};
    location.hash.replace(/^#/, '').split('&').forEach(function (kv) {
      var j = kv.indexOf('=');
      if (j > 0) st[kv.slice(0, j)] = decodeURIComponent(kv.slice(j + 1));
    });
    if (st.t0 !== undefined && st.t1 !== undefined && +st.t1 > +st.t0) { this.v0 = +st.t0; this.v1 = +st.t1; }
    if (st.sel) {
      var s = this.find(st.sel);
      if (s) {
        var L = s.row.levels[s.level];
        if (st.t0 === undefined) {
          var w = Math.max(20 * (L.end[s.i] - L.ts[s.i]), 20000);
          this.v0 = L.ts[s.i] - w / 2; this.v1 = this.v0 + w;
        }
        this.select(s);
        this.selText = st.sel;
        var top = s.row.y;
        if (this.flow) top = Math.min(this.flow.from.row.y, this.flow.to.row.y);
        this.scrollY = Math.max(0, Math.min(top - 30, this.contentH - this.H + 10));
      }
    }
    this.draw();
  };

  P.zoomAt = function (x, factor) {
    var t = this.T(Math.max(x, LABEL_W)), w = (this.v1 - this.v0) * factor;
    w = Math.min(Math.max(w, 100), this.span * 1.05);
    var f = (t - this.v0) / (this.v1 - this.v0);
    this.v0 = t - f * w; this.v1 = this.v0 + w;
    this.draw();
    this.saveState();
  };
  P.pan = function (dx) {
    var dt = dx * (this.v1 - this.v0) / (this.W - LABEL_W);
    this.v0 -= dt; this.v1 -= dt; this.draw();
  };
  P.scroll = function (dy) {
    this.scrollY = Math.max(0, Math.min(this.scrollY + dy, Math.max(0, this.contentH - this.H + 10)));
    this.draw();
  };
  P.bind = function () {
    var self = this, c = this.canvas, down = null;
    c.addEventListener('wheel', function (ev) {
      ev.preventDefault();
      var r = c.getBoundingClientRect();
      if (ev.shiftKey) self.scroll(ev.deltaY || ev.deltaX);
      else self.zoomAt(ev.clientX - r.left, Math.exp(ev.deltaY * 0.002));
    }, { passive: false });
    c.addEventListener('mousedown', function (ev) {
      var r = c.getBoundingClientRect();
      down = { x: ev.clientX - r.left, y: ev.clientY - r.top, lastX: ev.clientX, moved: false, shift: ev.shiftKey };
      if (down.shift) self.measure = [self.T(down.x), self.T(down.x)];
      c.classList.add('gp-drag');
    });
    window.addEventListener('mousemove', function (ev) {
      if (!down) return;
      var r = c.getBoundingClientRect();
      if (Math.abs(ev.clientX - r.left - down.x) > 3) down.moved = true;
      if (down.shift) { self.measure[1] = self.T(ev.clientX - r.left); self.draw(); }
      else { self.pan(ev.clientX - down.lastX); }
      down.lastX = ev.clientX;
    });
    window.addEventListener('mouseup', function (ev) {
      if (!down) return;
      c.classList.remove('gp-drag');
      if (!down.moved && !down.shift) {
        self.measure = null;
        var h = self.hit(down.x, down.y);
        self.selText = h ? self.names[h.row.levels[h.level].name[h.i]] : '';
        self.select(h);
      }
      down = null;
      self.saveState();
    });
    this.el.tabIndex = 0;
    this.el.addEventListener('keydown', function (ev) {
      var k = ev.key.toLowerCase(), mid = (LABEL_W + self.W) / 2;
      if (k === 'w') self.zoomAt(mid, 0.8);
      else if (k === 's') self.zoomAt(mid, 1.25);
      else if (k === 'a') self.pan(100);
      else if (k === 'd') self.pan(-100);
      else if (k === '0') { self.v0 = 0; self.v1 = self.span; self.scrollY = 0; self.draw(); }
      else return;
      ev.preventDefault();
    });
    window.addEventListener('resize', function () { self.resize(); });
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
  var root = document.documentElement;
  /* where the time to first paint goes (read by bench/report) */
  root.setAttribute('data-parse-ms', String(Math.round(tParse)));
  root.setAttribute('data-build-draw-ms', String(Math.round(tBuild)));
  if (!root.hasAttribute('data-wait')) {
    root.setAttribute('data-first-paint-ms', String(Math.round(performance.now())));
    root.setAttribute('data-ready', '1');
  }
})();
