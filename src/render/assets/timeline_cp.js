/* gpuprof timeline --critical-path: the overlay on a timeline made by timeline.js. Data (made by
 * timeline_cp.c, in the JSON script <data-src>-cp): "rows": [[row index, [event numbers]]] (the
 * numbers of the row's emitted events, as the levels' idx), "links": [[row, number, at end, row,
 * number, at end, type]], "paths": the legend's figures per rank. With the toggle on (the
 * default), the path's events are drawn in their colour with a magenta outline over a dimmed
 * timeline, and its edges as arrows (dependency edges dashed). The layout constants are
 * timeline.js's. */
(function () {
  'use strict';
  var LABEL_W = 220, SLICE_H = 16, RULER_H = 22, COLOR = '#d0009c';

  /* Per level of the row's current levels: the level positions of its path events (sorted by
   * start, as the level), and a map event number -> {level, i}; cached per levels object. */
  function pathOf(tl, row) {
    var lv = tl.levels(row);
    if (row.cpLv === lv) return row.cpAt;
    var set = row.cpSet, at = { levels: [], byNum: {} };
    for (var d = 0; d < lv.length; d++) {
      var L = lv[d], list = [];
      for (var k = 0; k < L.n; k++)
        if (set[L.idx[k]]) { list.push(k); at.byNum[L.idx[k]] = { level: d, i: k }; }
      at.levels.push(list);
    }
    row.cpLv = lv; row.cpAt = at;
    return at;
  }

  function install(tl, C) {
    var legend = document.getElementById('gp-tl-cp-legend');
    tl.cpOn = true;
    tl.rows.forEach(function (r) { r.cpSet = null; });
    C.rows.forEach(function (e) {
      var row = tl.rows[e[0]], set = {};
      e[1].forEach(function (n) { set[n] = 1; });
      if (row) row.cpSet = set;
    });
    var bar = tl.el.previousElementSibling, lab = document.createElement('label'), cb = document.createElement('input');
    cb.type = 'checkbox'; cb.checked = true; cb.id = tl.id + '-cp';
    lab.appendChild(cb); lab.appendChild(document.createTextNode(' critical path'));
    lab.style.color = COLOR; lab.style.marginLeft = '8px';
    if (bar) bar.appendChild(lab);
    cb.addEventListener('change', function () {
      tl.cpOn = cb.checked;
      if (legend) legend.style.display = cb.checked ? '' : 'none';
      tl.el.setAttribute('data-cp-on', cb.checked ? '1' : '0');
      tl.draw();
    });
    var draw = tl.draw;
    tl.draw = function () {
      draw.call(tl);
      if (tl.cpOn && tl.ctx) overlay(tl, C);
    };
    tl.el.setAttribute('data-cp-on', '1');
    tl.draw();
  }

  /* Dims the tracks, redraws the visible path events outlined, draws the edges. */
  function overlay(tl, C) {
    var ctx = tl.ctx, W = tl.W, H = tl.H, sy = tl.scrollY, shown = 0;
    ctx.save();
    ctx.beginPath(); ctx.rect(LABEL_W, RULER_H, W - LABEL_W, H - RULER_H); ctx.clip();
    ctx.fillStyle = 'rgba(255,255,255,0.7)'; ctx.fillRect(LABEL_W, RULER_H, W - LABEL_W, H - RULER_H);
    tl.items.forEach(function (it) {
      var y = it.y - sy;
      if (it.type !== 'track' || !it.row.cpSet || y + it.h < RULER_H || y > H) return;
      var lv = tl.levels(it.row), at = pathOf(tl, it.row);
      for (var d = 0; d < it.shown && d < lv.length; d++) {
        var L = lv[d], list = at.levels[d], yy = y + d * SLICE_H;
        for (var j = 0; j < list.length; j++) { /* a few per level: walked, not searched */
          var k = list[j];
          if (L.end[k] < tl.v0 || L.ts[k] > tl.v1) continue;
          var x0 = Math.max(LABEL_W, tl.X(L.ts[k])), x1 = Math.max(x0 + 2, tl.X(L.end[k]));
          ctx.fillStyle = tl.color(L.name[k], L.kind[k]); ctx.fillRect(x0, yy, x1 - x0, SLICE_H - 1);
          ctx.strokeStyle = COLOR; ctx.lineWidth = 2; ctx.strokeRect(x0, yy + 1, x1 - x0, SLICE_H - 3);
          shown++;
        }
      }
    });
    ctx.lineWidth = 1.5; ctx.strokeStyle = COLOR; ctx.fillStyle = COLOR;
    var arrows = 0;
    C.links.forEach(function (l) {
      var a = end(tl, l[0], l[1], l[2]), b = end(tl, l[3], l[4], l[5]);
      if (!a || !b || (Math.max(a.x, b.x) < LABEL_W) || Math.min(a.x, b.x) > W) return;
      ctx.setLineDash(/dependency/.test(l[6]) ? [4, 3] : []);
      ctx.beginPath(); ctx.moveTo(a.x, a.y);
      ctx.bezierCurveTo((a.x + b.x) / 2, a.y, (a.x + b.x) / 2, b.y, b.x, b.y); ctx.stroke();
      ctx.setLineDash([]);
      ctx.beginPath(); ctx.moveTo(b.x, b.y); ctx.lineTo(b.x - 7, b.y - 4); ctx.lineTo(b.x - 7, b.y + 4); ctx.fill();
      arrows++;
    });
    ctx.restore();
    tl.el.setAttribute('data-cp-shown', String(shown));
    tl.el.setAttribute('data-cp-arrows', String(arrows));
  }

  /* Where an edge's end is drawn now: {x, y}, null when its track or level is not shown. */
  function end(tl, r, num, atEnd) {
    var row = tl.rows[r];
    if (!row || row.ts) return null;
    if (!row.cpSet) row.cpSet = {};
    var p = pathOf(tl, row).byNum[num];
    if (!p) { /* an edge end that is not a path node (a launch's kernel): find it by number */
      var lv = tl.levels(row);
      for (var d = 0; d < lv.length && !p; d++) {
        var L = lv[d];
        for (var k = 0; k < L.n; k++) if (L.idx[k] === num) { p = { level: d, i: k }; break; }
      }
      if (!p) return null;
      pathOf(tl, row).byNum[num] = p;
    }
    var y = tl.place({ row: row, level: p.level });
    if (y === null) return null;
    var L2 = tl.levels(row)[p.level];
    return { x: tl.X(atEnd ? L2.end[p.i] : L2.ts[p.i]), y: y + SLICE_H / 2 };
  }

  (window.gpTimelines || []).forEach(function (tl) {
    var src = tl.el.getAttribute('data-src'), s = src && document.getElementById(src + '-cp');
    if (s) install(tl, JSON.parse(s.textContent));
  });
})();
