/* gpuprof dashboard: sortable, filterable operation table. The compact timeline is drawn by the
 * timeline script loaded before this one; this script marks the page ready when both are done. */
(function () {
  'use strict';
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
})();
