/* gpuprof dashboard: the table of every operation (dashboard_ops.c writes its rows as JSON in
 * #gp-ops-data): a tab per kind (the first, "ops & kernels", holds CPU ops, GPU work and ranges),
 * a name filter, sortable columns (an arrow marks the sorted one). Only the rows in view are in the
 * DOM (a spacer row above and below stands for the others), so a sort or a filter of 100,000 rows
 * is one array sort or scan, not 100,000 DOM moves. URL state: #filter=RE&tab=KIND|all.
 * The compact timeline is drawn by the timeline script loaded before this one; this script marks
 * the page ready when both are done. */
/* A table whose rows the page holds (gpuprof diff's per-name table): sorted and filtered in
 * place, as before the dashboard's rows became data. */
function gpStaticTable() {
  var table = document.getElementById('gp-ops');
  var body = table.tBodies[0], rows = Array.prototype.slice.call(body.rows);
  var count = document.getElementById('gp-count'), filter = document.getElementById('gp-filter');
  var heads = table.tHead.rows[0].cells, sortCol = -1, sortDir = 1;

  function cellKey(tr, c, numeric) {
    var td = tr.cells[c];
    return numeric ? parseFloat(td.getAttribute('data-v')) : td.textContent.toLowerCase();
  }
  function sortBy(c) {
    var numeric = heads[c].getAttribute('data-t') !== 's';
    sortDir = sortCol === c ? -sortDir : (numeric ? -1 : 1);
    sortCol = c;
    rows.sort(function (a, b) {
      var x = cellKey(a, c, numeric), y = cellKey(b, c, numeric);
      return x < y ? -sortDir : x > y ? sortDir : 0;
    });
    var frag = document.createDocumentFragment();
    rows.forEach(function (r) { frag.appendChild(r); });
    body.appendChild(frag);
    for (var i = 0; i < heads.length; i++) heads[i].className = i === c ? (sortDir > 0 ? 'gp-asc' : 'gp-desc') : '';
    table.setAttribute('data-sort', c + (sortDir > 0 ? ':asc' : ':desc'));
  }
  function applyFilter() {
    var t = filter.value, re = null, shown = 0;
    if (t) { try { re = new RegExp(t, 'i'); } catch (e) { re = null; } }
    rows.forEach(function (r) {
      var ok = !t || (re ? re.test(r.cells[0].textContent + ' ' + r.cells[1].textContent)
                        : (r.cells[1].textContent.indexOf(t) >= 0));
      r.className = ok ? '' : 'gp-hidden';
      if (ok) shown++;
    });
    count.textContent = shown + ' of ' + rows.length + ' operations';
    count.setAttribute('data-shown', String(shown));
  }
  for (var i = 0; i < heads.length; i++)
    heads[i].addEventListener('click', (function (c) { return function () { sortBy(c); }; })(i));
  filter.addEventListener('input', applyFilter);
  var m = /(?:^|&)filter=([^&]*)/.exec(location.hash.replace(/^#/, ''));
  if (m) filter.value = decodeURIComponent(m[1]);
  applyFilter();
  var root = document.documentElement;
  root.setAttribute('data-first-paint-ms', String(Math.round(performance.now())));
  root.setAttribute('data-ready', '1');
}
(function () {
  'use strict';
  if (!document.getElementById('gp-ops-data')) { gpStaticTable(); return; }
  var table = document.getElementById('gp-ops');
  var data = JSON.parse(document.getElementById('gp-ops-data').textContent);
  var R = data.rows, kinds = data.kinds;
  var body = table.tBodies[0], scroller = document.getElementById('gp-ops-scroll');
  var count = document.getElementById('gp-count'), filter = document.getElementById('gp-filter');
  var tabsEl = document.getElementById('gp-ops-tabs'), shareHead = document.getElementById('gp-share-head');
  var heads = table.tHead.rows[0].cells;
  /* column c of the table is field c of a row, but for the kind (field 0, a kind index) */
  var NUM_FIRST = 2, SHARE = 10;
  var tab = 'first', sortCol = 4, sortDir = -1, view = [], rowH = 19, lower = null;

  var UNITS = [[1e9, 's'], [1e6, 'ms'], [1e3, '\u00b5s']];
  function dur(ns) {
    var a = Math.abs(ns);
    for (var k = 0; k < 3; k++) if (a >= UNITS[k][0]) return (ns / UNITS[k][0]).toFixed(3) + ' ' + UNITS[k][1];
    return Math.round(ns) + ' ns';
  }
  function thousands(n) { return String(n).replace(/\B(?=(\d{3})+(?!\d))/g, ','); }
  function cell(r, c) {
    if (c === 0) return kinds[r[0]];
    if (c === 1) return r[1];
    if (c === 2) return thousands(r[2]);
    if (c === SHARE) return (100 * r[c]).toFixed(2) + '%';
    return dur(r[c]);
  }

  /* the tabs: ops & kernels, each kind present, all */
  var perKind = {}, first = {}, nFirst = 0;
  data.first.forEach(function (k) { first[k] = true; });
  R.forEach(function (r) { perKind[r[0]] = (perKind[r[0]] || 0) + 1; if (first[r[0]]) nFirst++; });
  function inTab(r) { return tab === 'all' || (tab === 'first' ? first[r[0]] : kinds[r[0]] === tab); }
  function addTab(id, label, n) {
    var b = document.createElement('button');
    b.type = 'button'; b.className = 'gp-tab'; b.setAttribute('role', 'tab');
    b.setAttribute('data-tab', id); b.setAttribute('data-count', String(n));
    b.textContent = label + ' (' + thousands(n) + ')';
    b.addEventListener('click', function () { setTab(id); });
    tabsEl.appendChild(b);
  }
  if (nFirst) addTab('first', 'ops & kernels', nFirst);
  for (var k = 0; k < kinds.length; k++) if (perKind[k]) addTab(kinds[k], kinds[k], perKind[k]);
  addTab('all', 'all', R.length);
  if (!nFirst) tab = 'all';

  /* what the share column is a share of, in the words of the tab */
  function shareOf() {
    var k = kinds.indexOf(tab);
    if (k < 0) return 'its kind';
    return data.of[k] === 'the GPU work sum' ? 'the GPU work sum' : tab + ' self time';
  }

  /* the rank of each row's name in name order: computed once (after the first paint), then a
   * sort by name is a sort of numbers */
  var nameRank = null;
  function rankNames() {
    if (nameRank) return nameRank;
    var lower = R.map(function (r) { return r[1].toLowerCase(); });
    var idx = R.map(function (r, i) { return i; });
    idx.sort(function (a, b) { return lower[a] < lower[b] ? -1 : lower[a] > lower[b] ? 1 : a - b; });
    nameRank = new Int32Array(R.length);
    for (var i = 0; i < idx.length; i++) nameRank[idx[i]] = i;
    return nameRank;
  }
  function compare(c) {
    var k = new Float64Array(R.length), d = sortDir;
    if (c === 1) k = rankNames();
    else if (c === 0) { var kr = rankKinds(); for (var i = 0; i < R.length; i++) k[i] = kr[R[i][0]]; }
    else for (var j = 0; j < R.length; j++) k[j] = R[j][c];
    return function (a, b) { return (k[a] - k[b]) * d || a - b; };
  }
  function rankKinds() {
    var byName = kinds.map(function (n, i) { return i; }).sort(function (a, b) { return kinds[a] < kinds[b] ? -1 : 1; });
    var r = []; byName.forEach(function (k, i) { r[k] = i; });
    return r;
  }

  /* order: the tab's rows sorted (kept until the sort or the tab changes, so that typing in the
   * filter is one scan); view: those that pass the filter (indexes in R) */
  var order = null, hay = null;
  function rebuild() {
    var t = filter.value, re = null;
    if (t) { try { re = new RegExp(t, 'i'); } catch (e) { re = null; } }
    if (!order) {
      order = [];
      for (var i = 0; i < R.length; i++) if (inTab(R[i])) order.push(i);
      order.sort(compare(sortCol));
    }
    if (re && !hay) hay = R.map(function (r) { return kinds[r[0]] + ' ' + r[1]; });
    view = !t ? order.slice() : order.filter(function (i) { return re ? re.test(hay[i]) : R[i][1].indexOf(t) >= 0; });
    var inTabN = tab === 'all' ? R.length : tab === 'first' ? nFirst : perKind[kinds.indexOf(tab)];
    count.textContent = thousands(view.length) + ' of ' + thousands(inTabN) + ' operations';
    count.setAttribute('data-shown', String(view.length));
    for (var c = 0; c < heads.length; c++) {
      heads[c].className = c === sortCol ? (sortDir > 0 ? 'gp-asc' : 'gp-desc') : '';
      heads[c].setAttribute('aria-sort', c === sortCol ? (sortDir > 0 ? 'ascending' : 'descending') : 'none');
    }
    table.setAttribute('data-sort', sortCol + (sortDir > 0 ? ':asc' : ':desc'));
    table.setAttribute('data-tab', tab);
    shareHead.textContent = 'share of ' + shareOf();
    var tabs = tabsEl.children;
    for (var j = 0; j < tabs.length; j++) tabs[j].setAttribute('aria-selected', tabs[j].getAttribute('data-tab') === tab ? 'true' : 'false');
    scroller.scrollTop = 0;
    draw();
  }
  function spacer(h) {
    var tr = document.createElement('tr'), td = document.createElement('td');
    tr.className = 'gp-spacer'; td.colSpan = heads.length; td.style.height = h + 'px';
    tr.appendChild(td);
    return tr;
  }
  /* the rows in view (and a screen more either side) */
  function draw() {
    var h = scroller.clientHeight || 500;
    var from = Math.max(0, Math.floor(scroller.scrollTop / rowH) - 20);
    var to = Math.min(view.length, from + Math.ceil(h / rowH) + 40);
    var frag = document.createDocumentFragment();
    if (from > 0) frag.appendChild(spacer(from * rowH));
    for (var i = from; i < to; i++) {
      var r = R[view[i]], tr = document.createElement('tr');
      for (var c = 0; c < heads.length; c++) {
        var td = document.createElement('td');
        td.textContent = cell(r, c);
        if (c === 1) { td.className = 'gp-name gp-clip'; td.title = r[1]; }
        else if (c >= NUM_FIRST) td.setAttribute('data-v', String(r[c]));
        tr.appendChild(td);
      }
      frag.appendChild(tr);
    }
    if (to < view.length) frag.appendChild(spacer((view.length - to) * rowH));
    body.textContent = '';
    body.appendChild(frag);
    table.setAttribute('data-drawn', String(to - from));
  }
  function sortBy(c) {
    var numeric = heads[c].getAttribute('data-t') !== 's';
    sortDir = sortCol === c ? -sortDir : (numeric ? -1 : 1);
    sortCol = c;
    order = null;
    rebuild();
  }
  function setTab(id) { tab = id; order = null; rebuild(); }

  for (var i = 0; i < heads.length; i++)
    heads[i].addEventListener('click', (function (c) { return function () { sortBy(c); }; })(i));
  filter.addEventListener('input', rebuild);
  var scrollPending = false;
  scroller.addEventListener('scroll', function () {
    if (scrollPending) return;
    scrollPending = true;
    requestAnimationFrame(function () { scrollPending = false; draw(); });
  });
  var hash = location.hash.replace(/^#/, '');
  var m = /(?:^|&)filter=([^&]*)/.exec(hash);
  if (m) filter.value = decodeURIComponent(m[1]);
  m = /(?:^|&)tab=([^&]*)/.exec(hash);
  if (m) {
    var want = decodeURIComponent(m[1]);
    for (var j = 0; j < tabsEl.children.length; j++) if (tabsEl.children[j].getAttribute('data-tab') === want) tab = want;
  }
  rebuild();
  var probe = body.rows[0];
  if (probe && probe.className !== 'gp-spacer' && probe.getBoundingClientRect().height > 0) {
    rowH = probe.getBoundingClientRect().height;
    draw();
  }
  setTimeout(rankNames, 0); /* ready before the user's first click on "name" */
  var root = document.documentElement;
  root.setAttribute('data-first-paint-ms', String(Math.round(performance.now())));
  root.setAttribute('data-ready', '1');
})();
