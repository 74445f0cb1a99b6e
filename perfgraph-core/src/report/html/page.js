// perfgraph HTML report: flame graph (icicle on a canvas), search, zoom, sortable tables, self-test.
// Plain ES2020, no libraries, no network; embedded verbatim by the Rust side.
(function () {
  'use strict';
  // Error capture first, so the self-test (#selftest) can report anything that goes wrong below.
  const errors = [];
  window.addEventListener('error', (e) => { errors.push(String(e.message || e.error || e)); });
  const origError = console.error;
  console.error = function (...args) {
    try { errors.push(args.map(String).join(' ')); } catch (_) { /* ignore */ }
    return origError.apply(console, args);
  };

  const ROW = 18;          // row height, CSS px
  const MIN_PX = 0.3;      // narrower frames are not drawn
  const $ = (id) => document.getElementById(id);
  let flame = null;        // the flame graph's API, when the page has one

  // ---------- Formatting ----------
  const fmtMs = (ns) => {
    const ms = ns / 1e6;
    return ms.toFixed(Math.abs(ms) < 1 ? 3 : Math.abs(ms) < 100 ? 2 : 1) + ' ms';
  };
  const pct = (v, of) => (of > 0 ? (100 * v / of).toFixed(1) : '0.0') + '%';
  // MB as the tables count them: 10^6 bytes (MOOSE's convertBytes).
  const fmtMB = (b) => (b > 0 ? '+' : '') + (b / 1e6).toFixed(1) + ' MB';
  const fmtBytes = (b) => {
    const u = ['B', 'KB', 'MB', 'GB', 'TB'];
    let i = 0;
    while (Math.abs(b) >= 1000 && i < u.length - 1) { b /= 1000; i++; } // decimal, as the tables
    return (i ? b.toFixed(1) : String(Math.round(b))) + ' ' + u[i];
  };

  // ---------- Flame graph ----------
  function initFlame(data) {
    const box = $('flame'), canvas = $('flame-canvas');
    let tip = $('tip');
    if (!tip) { tip = document.createElement('div'); tip.id = 'tip'; tip.hidden = true; box.appendChild(tip); }
    const search = $('search'), weightSel = $('weight'), resetBtn = $('reset'), matchOut = $('match');
    const raw = Array.isArray(data.nodes) ? data.nodes : [];
    const names = Array.isArray(data.names) ? data.names.map(String) : [];
    const n = Math.floor(raw.length / 8);
    if (!canvas || n === 0) return null;
    const ctx = canvas.getContext('2d');

    // Columnar model.
    const parent = new Int32Array(n), nameIx = new Int32Array(n), depth = new Int32Array(n);
    const totNs = new Float64Array(n), selfNs = new Float64Array(n), calls = new Float64Array(n);
    const mem = new Float64Array(n), alloc = new Float64Array(n), selfAlloc = new Float64Array(n);
    const nChild = new Int32Array(n + 1);
    let maxDepth = 0;
    for (let i = 0; i < n; i++) {
      const o = i * 8;
      let p = raw[o] | 0;
      if (i === 0) p = -1;
      else if (p < 0 || p >= i) p = 0; // defensive: orphans hang under the root
      parent[i] = p;
      const k = raw[o + 1] | 0;
      nameIx[i] = k >= 0 && k < names.length ? k : -1;
      totNs[i] = +raw[o + 2] || 0; selfNs[i] = +raw[o + 3] || 0; calls[i] = +raw[o + 4] || 0;
      mem[i] = +raw[o + 5] || 0; alloc[i] = +raw[o + 6] || 0; selfAlloc[i] = +raw[o + 7] || 0;
      if (p >= 0) { depth[i] = depth[p] + 1; nChild[p + 1]++; }
      if (depth[i] > maxDepth) maxDepth = depth[i];
    }
    const nameOf = (i) => (nameIx[i] >= 0 ? names[nameIx[i]] : '?');
    // Children in CSR form: kids[start[i] .. start[i+1]).
    const start = new Int32Array(n + 1);
    for (let i = 0; i < n; i++) start[i + 1] = start[i] + nChild[i + 1];
    const kids = new Int32Array(Math.max(0, n - 1));
    const fill = start.slice(0, n);
    for (let i = 1; i < n; i++) kids[fill[parent[i]]++] = i;

    // State.
    const weight = new Float64Array(n);
    const x0 = new Float64Array(n), x1 = new Float64Array(n); // layout, as fractions of the width
    const matchName = new Uint8Array(names.length);
    let weightKind = 'time', zoom = 0, query = '', matchCount = 0, width = 1, drawn = 0, hovered = -1;
    const order = new Int32Array(n), stack = new Int32Array(n + 1); // laid-out nodes, in drawing order
    let nOrder = 0, layoutWidth = 0;

    function setWeight(kind) {
      weightKind = kind === 'bytes' ? 'bytes' : 'time';
      const src = weightKind === 'bytes' ? alloc : totNs;
      for (let i = 0; i < n; i++) weight[i] = src[i] > 0 ? src[i] : 0;
      // Children in decreasing weight (ties: original order); sort only the runs not already in order.
      const cmp = (a, b) => weight[b] - weight[a] || a - b;
      for (let i = 0; i < n; i++) {
        const s = start[i], e = start[i + 1];
        for (let j = s + 1; j < e; j++) {
          if (cmp(kids[j - 1], kids[j]) > 0) { kids.subarray(s, e).sort(cmp); break; }
        }
      }
    }

    // Lays out the zoomed frame's subtree (fractions of the width) in pre-order. Frames under MIN_PX
    // (and so their descendants) are skipped: they are neither drawn nor hit.
    function layout() {
      width = Math.max(1, box.clientWidth || 800);
      layoutWidth = width;
      const minFrac = MIN_PX / width;
      let p = zoom, sp = 0;
      while (p >= 0) { x0[p] = 0; x1[p] = 1; p = parent[p]; } // ancestors: full width
      nOrder = 0;
      stack[sp++] = zoom;
      while (sp) {
        const i = stack[--sp];
        order[nOrder++] = i;
        const s = start[i], e = start[i + 1];
        if (s === e) continue;
        let sum = 0;
        for (let j = s; j < e; j++) sum += weight[kids[j]];
        const scale = (x1[i] - x0[i]) / Math.max(weight[i], sum, 1e-300);
        let x = x0[i];
        for (let j = s; j < e; j++) {
          const c = kids[j];
          x0[c] = x; x += weight[c] * scale; x1[c] = x;
        }
        for (let j = e - 1; j >= s; j--) { // pre-order, heaviest first
          const c = kids[j];
          if (x1[c] - x0[c] >= minFrac) stack[sp++] = c;
        }
      }
    }

    // Colours: CSS custom properties (light/dark), warm hues from a stable hash of the name.
    let theme = null, colours = [];
    function readTheme() {
      const cs = getComputedStyle(document.documentElement);
      const v = (k, d) => (cs.getPropertyValue(k) || '').trim() || d;
      theme = {
        s: parseFloat(v('--flame-s', '80')), l: parseFloat(v('--flame-l', '62')),
        dim: v('--flame-dim', '#ccc'), match: v('--flame-match', '#a855f7'),
        anc: v('--flame-ancestor', '#bbb'), text: v('--flame-text', '#222'),
        textDim: v('--flame-text-dim', '#666'), matchText: v('--flame-match-text', '#fff'),
        font: '12px ' + (v('--font', 'system-ui, sans-serif')),
      };
      colours = new Array(names.length);
    }
    function colourOf(k) {
      if (k < 0) return theme.dim;
      let c = colours[k];
      if (c === undefined) {
        let h = 2166136261; // FNV-1a
        const s = names[k];
        for (let i = 0; i < s.length; i++) { h ^= s.charCodeAt(i); h = Math.imul(h, 16777619); }
        h >>>= 0;
        const hue = h % 50, light = theme.l + ((h >>> 8) % 11) - 5, sat = theme.s - ((h >>> 16) % 15);
        c = colours[k] = 'hsl(' + hue + ',' + sat + '%,' + light + '%)';
      }
      return c;
    }

    // Label text cut with an ellipsis to fit in `avail` px; cached full widths per name.
    const fullW = new Float64Array(names.length).fill(-1);
    function fitLabel(k, avail) {
      const s = k >= 0 ? names[k] : '?';
      let w = k >= 0 ? fullW[k] : -1;
      if (w < 0) { w = ctx.measureText(s).width; if (k >= 0) fullW[k] = w; }
      if (w <= avail) return s;
      let m = Math.floor(s.length * avail / w);
      while (m > 0) {
        const t = s.slice(0, m) + '…';
        if (ctx.measureText(t).width <= avail) return m > 1 ? t : '';
        m--;
      }
      return '';
    }

    function render() {
      if (!theme) readTheme();
      const dpr = window.devicePixelRatio || 1;
      if (Math.max(1, box.clientWidth || 800) !== layoutWidth) layout();
      const height = (maxDepth + 1) * ROW;
      if (canvas.width !== Math.round(width * dpr) || canvas.height !== Math.round(height * dpr)) {
        canvas.width = Math.round(width * dpr);
        canvas.height = Math.round(height * dpr);
        canvas.style.width = width + 'px';
        canvas.style.height = height + 'px';
      }
      ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
      ctx.clearRect(0, 0, width, height);
      ctx.font = theme.font;
      ctx.textBaseline = 'middle';
      let count = 0;
      const searching = query !== '';
      const draw = (i, fillStyle, textStyle) => {
        const x = x0[i] * width, w = (x1[i] - x0[i]) * width, y = depth[i] * ROW;
        ctx.fillStyle = fillStyle;
        ctx.fillRect(x, y, w > 2 ? w - 1 : w, ROW - 1);
        if (i === hovered) {
          ctx.strokeStyle = theme.text;
          ctx.strokeRect(x + 0.5, y + 0.5, Math.max(0, w - 2), ROW - 2);
        }
        count++;
        if (w > 24) {
          const label = fitLabel(nameIx[i], w - 8);
          if (label) { ctx.fillStyle = textStyle; ctx.fillText(label, x + 4, y + ROW / 2); }
        }
      };
      for (let p = parent[zoom]; p >= 0; p = parent[p]) draw(p, theme.anc, theme.textDim);
      for (let j = 0; j < nOrder; j++) {
        const i = order[j];
        const k = nameIx[i];
        if (!searching) draw(i, colourOf(k), theme.text);
        else if (k >= 0 && matchName[k]) draw(i, theme.match, theme.matchText);
        else draw(i, theme.dim, theme.textDim);
      }
      drawn = count;
      return count;
    }

    let pending = 0;
    const schedule = () => { if (!pending) pending = requestAnimationFrame(() => { pending = 0; render(); }); };

    // Hit test: walk down from the zoomed frame (or up its ancestors) to the frame under x,y (CSS px).
    function hit(x, y) {
      const d = Math.floor(y / ROW);
      if (x < 0 || x >= width || d < 0 || d > maxDepth) return -1;
      let i = zoom;
      if (d <= depth[zoom]) { while (depth[i] > d) i = parent[i]; return i; }
      const fx = x / width;
      while (depth[i] < d) {
        if ((x1[i] - x0[i]) * width < MIN_PX) return -1; // its children were not laid out
        let next = -1;
        for (let j = start[i]; j < start[i + 1]; j++) {
          const c = kids[j];
          if (fx >= x0[c] && fx < x1[c]) { next = c; break; }
        }
        if (next < 0) return -1;
        i = next;
      }
      return (x1[i] - x0[i]) * width >= MIN_PX ? i : -1;
    }
    const at = (e) => { const r = canvas.getBoundingClientRect(); return hit(e.clientX - r.left, e.clientY - r.top); };

    const label = (i) => 'Flame graph of ' + nameOf(0) + (i ? ', zoomed to ' + nameOf(i) : '') +
      '. Click a frame to zoom in, Escape to reset.';
    function zoomTo(i) {
      if (i < 0 || i >= n) return;
      zoom = i;
      layout();
      render();
      canvas.setAttribute('aria-label', label(i));
    }

    function showTip(i, e) {
      const root = totNs[0];
      tip.textContent = '';
      const line = (label, value) => {
        const div = document.createElement('div');
        const b = document.createElement('span');
        b.className = 'k';
        b.textContent = label;
        div.append(b, ' ' + value);
        tip.append(div);
      };
      const title = document.createElement('div');
      title.className = 'name';
      title.textContent = nameOf(i);
      tip.append(title);
      line('Total', fmtMs(totNs[i]) + ' (' + pct(totNs[i], root) + ')');
      line('Self', fmtMs(selfNs[i]) + ' (' + pct(selfNs[i], root) + ')');
      line('Calls', calls[i].toLocaleString('en-US'));
      line('Memory', fmtMB(mem[i]));
      if (data.bytes) line('Allocated', fmtBytes(alloc[i]) + ' (self ' + fmtBytes(selfAlloc[i]) + ')');
      tip.hidden = false;
      const pad = 4, off = 14, tw = tip.offsetWidth, th = tip.offsetHeight;
      const vw = document.documentElement.clientWidth, vh = window.innerHeight;
      let x = e.clientX + off, y = e.clientY + off;
      if (x + tw > vw - pad) x = e.clientX - off - tw;
      if (y + th > vh - pad) y = e.clientY - off - th;
      tip.style.left = Math.max(pad, Math.min(x, vw - tw - pad)) + 'px';
      tip.style.top = Math.max(pad, Math.min(y, vh - th - pad)) + 'px';
    }
    function hideTip() {
      tip.hidden = true;
      if (hovered >= 0) { hovered = -1; schedule(); }
    }

    function applySearch() {
      query = search ? search.value.trim().toLowerCase() : '';
      matchCount = 0;
      if (!query) { if (matchOut) matchOut.textContent = ''; render(); return 0; }
      for (let k = 0; k < names.length; k++) matchName[k] = names[k].toLowerCase().includes(query) ? 1 : 0;
      // inside[i]: i or one of its ancestors matches; a match's weight counts once (no nested double count).
      const inside = new Uint8Array(n);
      let w = 0;
      for (let i = 0; i < n; i++) {
        const m = nameIx[i] >= 0 && matchName[nameIx[i]] === 1;
        const up = parent[i] >= 0 ? inside[parent[i]] : 0;
        if (m) { matchCount++; if (!up) w += weight[i]; }
        inside[i] = m || up ? 1 : 0;
      }
      if (matchOut) {
        matchOut.textContent = matchCount === 0 ? 'No frames match'
          : matchCount + (matchCount === 1 ? ' frame matches: ' : ' frames match: ') + pct(w, weight[0]) +
            (weightKind === 'bytes' ? ' of the bytes allocated' : ' of the time');
      }
      render();
      return matchCount;
    }

    // Wiring.
    canvas.tabIndex = 0;
    canvas.setAttribute('role', 'img');
    canvas.setAttribute('aria-label', label(0));
    const onMove = (e) => {
      const i = at(e);
      canvas.style.cursor = i >= 0 ? 'pointer' : 'default';
      if (i < 0) { hideTip(); return; }
      if (i !== hovered) { hovered = i; schedule(); }
      showTip(i, e);
    };
    canvas.addEventListener('mousemove', onMove);
    canvas.addEventListener('mouseleave', hideTip);
    canvas.addEventListener('click', (e) => {
      const i = at(e);
      if (i >= 0 && i !== zoom) { zoomTo(i); if (!tip.hidden) onMove(e); }
    });
    document.addEventListener('keydown', (e) => { if (e.key === 'Escape' && zoom !== 0) zoomTo(0); });
    if (resetBtn) resetBtn.addEventListener('click', () => zoomTo(0));
    if (search) search.addEventListener('input', applySearch);
    if (weightSel) {
      weightSel.addEventListener('change', () => { hideTip(); setWeight(weightSel.value); layout(); applySearch(); });
    }
    window.addEventListener('resize', schedule);
    // Also follow the container's width (e.g. when a scrollbar appears).
    if (window.ResizeObserver) {
      new ResizeObserver(() => { if (Math.max(1, box.clientWidth || 800) !== layoutWidth) schedule(); }).observe(box);
    }
    if (window.matchMedia) {
      const mq = window.matchMedia('(prefers-color-scheme: dark)');
      const onTheme = () => { theme = null; schedule(); };
      if (mq.addEventListener) mq.addEventListener('change', onTheme);
    }

    // First render.
    setWeight(weightSel ? weightSel.value : 'time');
    layout();
    if (search && search.value.trim()) applySearch(); else render();

    return {
      n, names, nameOf, weight, x0, x1, depth, kids, start, canvas, render, zoomTo,
      get zoom() { return zoom; }, get drawn() { return drawn; }, get width() { return width; },
      get matches() { return matchCount; },
    };
  }

  // ---------- Sortable tables ----------
  const collator = new Intl.Collator(undefined, { numeric: true, sensitivity: 'base' });
  function initTable(table) {
    const body = table.tBodies[0];
    const head = table.tHead ? table.tHead.rows[0] : null;
    if (!body || !head) return;
    const original = Array.from(body.rows);
    let col = -1, state = 0; // state: 0 original, 1 first direction, 2 reversed
    const ths = Array.from(head.cells);
    function sortBy(c) {
      if (c === col) state = (state + 1) % 3; else { col = c; state = 1; }
      const rows = original.slice();
      const numeric = rows.some((r) => r.cells[c] && r.cells[c].hasAttribute('data-v'));
      let desc = false;
      if (state) {
        desc = numeric ? state === 1 : state === 2;
        const key = (r) => {
          const td = r.cells[c];
          if (!td) return null;
          if (numeric) {
            if (!td.hasAttribute('data-v')) return null;
            const v = parseFloat(td.getAttribute('data-v'));
            return Number.isNaN(v) ? null : v;
          }
          return td.textContent.trim();
        };
        const keyed = rows.map((r, i) => ({ r, i, k: key(r) }));
        keyed.sort((a, b) => {
          if (a.k === null || b.k === null) return (a.k === null) - (b.k === null) || a.i - b.i; // missing last
          const d = numeric ? a.k - b.k : collator.compare(a.k, b.k);
          return (desc ? -d : d) || a.i - b.i;
        });
        rows.length = 0;
        keyed.forEach((x) => rows.push(x.r));
      }
      const frag = document.createDocumentFragment();
      rows.forEach((r) => frag.appendChild(r));
      body.appendChild(frag);
      ths.forEach((th, i) => {
        if (i === c && state) th.setAttribute('aria-sort', desc ? 'descending' : 'ascending');
        else th.setAttribute('aria-sort', 'none');
      });
    }
    ths.forEach((th, i) => {
      th.tabIndex = 0;
      th.setAttribute('aria-sort', 'none');
      th.title = 'Sort by this column';
      th.addEventListener('click', () => sortBy(i));
      th.addEventListener('keydown', (e) => {
        if (e.key === 'Enter' || e.key === ' ') { e.preventDefault(); sortBy(i); }
      });
    });
  }

  // ---------- Start ----------
  try {
    const script = $('perfgraph-data');
    if (script && $('flame')) flame = initFlame(JSON.parse(script.textContent));
  } catch (e) {
    errors.push('flame: ' + (e && e.stack ? e.stack : e));
  }
  const tables = Array.from(document.querySelectorAll('table.sortable'));
  tables.forEach((t) => { try { initTable(t); } catch (e) { errors.push('table: ' + e); } });
  window.perfgraph = { flame, errors };

  // ---------- Self-test (file:///…#selftest) ----------
  if (location.hash === '#selftest') {
    const out = {
      errors, frames: flame ? flame.n : 0, drawn: flame ? flame.drawn : 0, render_ms: performance.now(),
      zoomed: false, zoom_name: null, reset: false, search_matches: 0, sorted: false, tables: tables.length,
    };
    if (flame) {
      try {
        const f = flame, child = f.start[1] > f.start[0] ? f.kids[f.start[0]] : -1;
        if (child >= 0) {
          const r = f.canvas.getBoundingClientRect();
          const cx = r.left + (f.x0[child] + f.x1[child]) / 2 * f.width, cy = r.top + (f.depth[child] + 0.5) * ROW;
          f.canvas.dispatchEvent(new MouseEvent('click', { clientX: cx, clientY: cy, bubbles: true, cancelable: true }));
          out.zoomed = f.zoom === child && f.x0[child] === 0 && f.x1[child] === 1;
          out.zoom_name = f.nameOf(child);
          const reset = $('reset');
          if (reset) reset.click();
          out.reset = f.zoom === 0;
          const search = $('search');
          if (search) {
            search.value = f.nameOf(child);
            search.dispatchEvent(new Event('input', { bubbles: true }));
            out.search_matches = f.matches;
            search.value = '';
            search.dispatchEvent(new Event('input', { bubbles: true }));
          }
        }
      } catch (e) { errors.push('selftest flame: ' + e); }
    }
    try {
      const t = tables[0];
      const th = t && t.tHead && t.tHead.rows[0] && t.tHead.rows[0].cells[1];
      if (th) {
        th.click();
        const vals = Array.from(t.tBodies[0].rows, (r) => r.cells[1] && r.cells[1].getAttribute('data-v'));
        let ok = true, seenMissing = false, prev = Infinity;
        const desc = th.getAttribute('aria-sort') === 'descending';
        if (!desc) prev = -Infinity;
        for (const s of vals) {
          if (s === null) { seenMissing = true; continue; }
          const v = parseFloat(s);
          if (seenMissing || (desc ? v > prev : v < prev)) ok = false;
          prev = v;
        }
        out.sorted = ok && th.getAttribute('aria-sort') !== 'none';
      }
    } catch (e) { errors.push('selftest table: ' + e); }
    const pre = document.createElement('pre');
    pre.id = 'selftest';
    pre.textContent = JSON.stringify(out);
    document.body.appendChild(pre);
  }
})();
