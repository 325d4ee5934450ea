// Facts for the date and time picker strategy (mao_page.actions.widgets.date): the day
// grids, navigation buttons and number columns (or clock faces) a picker's panel rendered.
// Reads only, from structure and text, never class names; Python decides what they mean.
// Texts are read with every kind of space as one space (squashAny): they are parsed and
// compared with what was asked for, never shown as names.

// A day cell's text: a day number without a leading zero (time columns say "08").
const DAY_TEXT = /^[1-9]\d?$/;
// A time column item or clock number: "0"-"59", with or without a leading zero.
const TIME_TEXT = /^\d{1,2}$/;
const GRID_MIN_DAYS = 28;

// Innermost rendered elements under `root` whose whole text matches `pattern`.
function numberLeaves(root, pattern) {
  const out = [];
  const walker = root.ownerDocument.createTreeWalker(root, NodeFilter.SHOW_ELEMENT);
  for (let n = walker.currentNode; n; n = walker.nextNode()) {
    const text = squashAny(n.textContent);
    if (!pattern.test(text)) continue;
    if (Array.from(n.children).some((c) => squashAny(c.textContent) === text)) continue;
    if (!isRendered(n)) continue;
    out.push(n);
  }
  return out;
}

// The date a cell states for itself (title, data-date, aria-label, datetime...), looked for
// on the number's element and up to three ancestors below the grid.
function cellLabel(el, grid) {
  for (let n = el, i = 0; n && n !== grid && i < 4; n = n.parentElement, i++) {
    for (const name of ["data-date", "data-value", "datetime", "aria-label", "title", "data-day"]) {
      const value = n.getAttribute(name);
      if (value && /\d{4}|\d{1,2}\D+\d{1,2}\D+\d{2,4}/.test(value)) return value;
    }
  }
  return "";
}

function cellDisabled(el, grid) {
  for (let n = el, i = 0; n && n !== grid && i < 4; n = n.parentElement, i++) {
    if (n.getAttribute("aria-disabled") === "true" || n.hasAttribute("disabled")) return true;
  }
  return false;
}

// The day grids under `roots`: the lowest ancestor holding at least 28 day numbers. Per grid,
// the text of its header (what the panel around it shows outside any grid, field values
// included) and its cells in document order; the current month's cells are the run
// 1, 2, ... N (N >= 28), the others belong to the months before and after.
function calendarGrids(roots) {
  const grids = [];
  const cells = [];
  for (const root of roots) {
    const leaves = numberLeaves(root, DAY_TEXT).filter((n) => Number(squashAny(n.textContent)) <= 31);
    const counts = new Map();
    for (const leaf of leaves) {
      for (let n = leaf.parentElement; n && n !== root.parentElement; n = n.parentElement) {
        counts.set(n, (counts.get(n) || 0) + 1);
      }
    }
    for (const leaf of leaves) {
      let grid = null;
      for (let n = leaf.parentElement; n && n !== root.parentElement; n = n.parentElement) {
        if (counts.get(n) >= GRID_MIN_DAYS) { grid = n; break; }
      }
      if (!grid) continue;
      let index = grids.indexOf(grid);
      if (index < 0) { grids.push(grid); index = grids.length - 1; }
      cells.push([index, leaf]);
    }
  }
  const facts = [];
  const nodes = [];
  const kept = [];
  grids.forEach((grid, index) => {
    const own = cells.filter(([i]) => i === index).map(([, leaf]) => leaf);
    const numbers = own.map((leaf) => Number(squashAny(leaf.textContent)));
    const first = numbers.indexOf(1);
    let last = first;
    while (first >= 0 && last + 1 < numbers.length && numbers[last + 1] === numbers[last] + 1) last++;
    // No month's run of days, or "00" / "08" among the numbers: time columns, not days.
    if (first < 0 || last - first + 1 < GRID_MIN_DAYS || numberLeaves(grid, /^0\d?$/).length) return;
    kept.push(grid);
    own.forEach((leaf, i) => {
      nodes.push(leaf);
      facts.push([kept.length - 1, numbers[i], cellLabel(leaf, grid), cellDisabled(leaf, grid), i >= first && i <= last]);
    });
  });
  return { nodes, facts, grids: kept, headers: kept.map((grid) => headerText(grid, kept)) };
}

// The text around a grid that names its month: the nearest ancestor with a 4-digit number
// outside every grid, unless that ancestor holds another grid as well (a two-month range
// panel's shared container would mix both headers).
function headerText(grid, grids) {
  for (let n = grid.parentElement, i = 0; n && i < 6; n = n.parentElement, i++) {
    if (grids.some((g) => g !== grid && n.contains(g))) return "";
    const parts = [];
    const visit = (node) => {
      for (const c of node.childNodes) {
        if (c === grid) continue;
        if (c.nodeType === 3) {
          if (c.parentElement && isRendered(c.parentElement)) parts.push(c.textContent);
        } else if (c.nodeType === 1) {
          if (c.localName === "input" && c.value) parts.push(c.value);
          else visit(c);
        }
      }
    };
    visit(n);
    const text = squashAny(parts.join(" "));
    if (/\d{4}/.test(text)) return text;
  }
  return "";
}

// Buttons of a picker panel outside its day grids and number columns: navigation (next and
// previous month or year), view switches, Today / Now, OK. [name, text, disabled] each.
function pickerButtons(roots, grids) {
  const nodes = [];
  const facts = [];
  for (const root of roots) {
    for (const el of root.querySelectorAll("button, [role=button], a")) {
      if ((grids || []).some((g) => g.contains(el))) continue;
      if (!isRendered(el)) continue;
      // Hidden arrows keep their place (a range panel's inner ones); pointer-events may be
      // off only while the panel animates in, so those stay (the click waits for them).
      if (el.ownerDocument.defaultView.getComputedStyle(el).visibility === "hidden") continue;
      const name = squashAny(el.getAttribute("aria-label") || el.getAttribute("title") || "");
      const disabled = el.disabled === true || el.getAttribute("aria-disabled") === "true" || el.hasAttribute("disabled");
      nodes.push(el);
      facts.push([name, squashAny(el.innerText || ""), disabled]);
    }
  }
  return { nodes, facts };
}

// Groups of time numbers under `roots`: the items of one column (siblings under one list) or
// of one clock face, in document order. [group, text, disabled] per item.
function timeColumns(roots, grids) {
  const nodes = [];
  const facts = [];
  const groups = [];
  for (const root of roots) {
    for (const leaf of numberLeaves(root, TIME_TEXT)) {
      if ((grids || []).some((g) => g.contains(leaf))) continue;
      // The item: the leaf or the ancestor whose siblings are the other items of the column.
      let item = leaf;
      for (let n = leaf, i = 0; n.parentElement && i < 3; n = n.parentElement, i++) {
        if (n.parentElement.children.length >= 6) { item = n; break; }
      }
      const group = item.parentElement;
      let index = groups.indexOf(group);
      if (index < 0) { groups.push(group); index = groups.length - 1; }
      const disabled = item.getAttribute("aria-disabled") === "true" || item.hasAttribute("disabled");
      nodes.push(leaf);
      facts.push([index, squashAny(leaf.textContent), disabled]);
    }
  }
  return { nodes, facts };
}

// Bring a column item into view inside its own scrolling list before clicking it; the
// column's own scroll handler then follows, as after a wheel turn.
// True when it had to scroll.
function revealInList(el) {
  const before = el.getBoundingClientRect();
  el.scrollIntoView({ block: "nearest", inline: "nearest" });
  const after = el.getBoundingClientRect();
  return before.top !== after.top || before.left !== after.left;
}

// The values a range picker shows across its two inputs, read from the field the agent
// named: the nearest container (a few levels up) holding exactly two text inputs, else the
// field's own value.
function rangeFieldText(el) {
  for (let n = el.parentElement, i = 0; n && i < 4; n = n.parentElement, i++) {
    const inputs = Array.from(n.querySelectorAll("input")).filter((input) => {
      const type = (input.getAttribute("type") || "text").toLowerCase();
      return type === "text" || type === "search";
    });
    if (inputs.length > 2) break;
    if (inputs.length === 2) return inputs.map((input) => input.value).join(" – ");
  }
  return "value" in el ? el.value : "";
}

// Whether `node` is `ancestor` or inside it (through shadow roots too).
function containsNode(ancestor, node) {
  return ancestor === node || composedContains(ancestor, node);
}

Object.assign(MaoDom, {
  calendarGrids, pickerButtons, timeColumns, revealInList, containsNode, rangeFieldText,
});
