"""A generated order-list admin page: the business page ``bench/page_cost.py`` embeds the SDK in.

What a site owner's back office looks like: a fixed top bar with a Refresh button, section
links, a filter form, a new-order form, and a table of orders whose rows each carry a
checkbox, a View and a Flag button; the page's own script handles them (delegated row clicks,
filtering and sorting the rows, validating and adding an order, the selection count). The
data is made up from the row index, so the same size gives the same page byte for byte.

``order_page(target_elements)`` adds rows until the document (html, head and body included)
has about that many elements; the SDK, when embedded, adds its own few on top.

The content column is 860 px wide, clear of the SDK panel (340 px at the bottom right of a
1280 px viewport): the panel covers what is under it, and an agent's action on a target there
answers ``obscured``.
"""

from __future__ import annotations

import re

# Element counts that the generated HTML below is built from (checked by ``_count_elements``).
ROW_ELEMENTS = 12  # tr, 7 td, checkbox, status badge, View, Flag
DOCUMENT_ELEMENTS = 5  # html, head, meta, title, body (page_html's frame)

CUSTOMERS = (
    "Acme Trading", "Blue Harbor Foods", "Cedar & Sons", "Delta Outfitters", "Evergreen Clinic",
    "Fjord Logistics", "Granite Works", "Harbor Lights Cafe", "Indigo Print", "Juniper Dental",
    "Kestrel Aviation", "Lotus Spa", "Maple Street Books", "Northwind Traders", "Orchid Florist",
)
STATUSES = ("New", "Paid", "Shipped", "Cancelled")
FIRST_ORDER = 10001

STYLE = """<style>
body { margin: 0; padding: 60px 24px 24px; font: 14px/1.4 system-ui, sans-serif; color: #1d2330; }
.top { position: fixed; left: 0; top: 0; right: 0; height: 48px; display: flex; gap: 16px;
  align-items: center; padding: 0 24px; background: #24324a; color: #fff; z-index: 10; }
.top h1 { font-size: 18px; margin: 0; } .top nav a { color: #cfe0ff; margin-right: 10px; }
#refresh { padding: 6px 14px; }
main { max-width: 860px; }
form { display: flex; flex-wrap: wrap; gap: 10px; align-items: end; margin: 12px 0; }
label { display: flex; flex-direction: column; font-size: 12px; color: #56607a; }
table { border-collapse: collapse; width: 100%; }
th, td { border-bottom: 1px solid #e3e7ef; padding: 4px 8px; text-align: left; }
.badge { padding: 1px 6px; border-radius: 8px; background: #eef2fa; }
tr[hidden] { display: none; } tr.flagged { background: #fff7e0; }
.error { color: #b3261e; min-height: 1.4em; }
</style>"""

SCRIPT = """<script>
(() => {
  const tbody = document.querySelector("#orders tbody");
  const summary = document.getElementById("summary");
  const rows = () => Array.from(tbody.rows).filter((row) => row.dataset.id);
  const updateSummary = () => {
    const all = rows();
    const shown = all.filter((row) => !row.hidden).length;
    const selected = tbody.querySelectorAll("input[type=checkbox]:checked").length;
    summary.textContent = `${shown} of ${all.length} orders shown, ${selected} selected`;
  };
  document.getElementById("refresh").addEventListener("click", () => {
    document.getElementById("refreshed").textContent =
      "Refreshed " + new Date().toLocaleTimeString();
  });
  // One delegated handler for every row's buttons, as list views usually do.
  tbody.addEventListener("click", (event) => {
    const button = event.target.closest("button");
    if (!button) return;
    const row = button.closest("tr");
    if (button.dataset.act === "flag") {
      const on = button.getAttribute("aria-pressed") !== "true";
      button.setAttribute("aria-pressed", String(on));
      row.classList.toggle("flagged", on);
    } else if (button.dataset.act === "view") {
      const open = row.nextElementSibling && row.nextElementSibling.classList.contains("details");
      if (open) { row.nextElementSibling.remove(); return; }
      const details = document.createElement("tr");
      details.className = "details";
      details.innerHTML = `<td colspan="7">Order ${row.dataset.id}: ${row.cells[2].textContent},
        ${row.cells[4].textContent}, ${row.cells[5].textContent}</td>`;
      row.after(details);
    }
  });
  tbody.addEventListener("change", updateSummary);
  // Filters: text and status, applied a moment after the last keystroke.
  const filters = document.getElementById("filters");
  let pending = 0;
  const applyFilters = () => {
    const text = filters.elements.q.value.trim().toLowerCase();
    const status = filters.elements.status.value;
    const flagged = filters.elements.flagged.checked;
    for (const row of rows()) {
      const match = (!text || row.textContent.toLowerCase().includes(text))
        && (!status || row.dataset.status === status)
        && (!flagged || row.classList.contains("flagged"));
      row.hidden = !match;
    }
    updateSummary();
  };
  filters.addEventListener("input", () => {
    clearTimeout(pending);
    pending = setTimeout(applyFilters, 150);
  });
  filters.addEventListener("submit", (event) => { event.preventDefault(); applyFilters(); });
  filters.addEventListener("reset", () => setTimeout(applyFilters, 0));
  // Sorting by a column header's button.
  document.querySelector("#orders thead").addEventListener("click", (event) => {
    const button = event.target.closest("button[data-col]");
    if (!button) return;
    const col = Number(button.dataset.col);
    const numeric = col === 1 || col === 4;
    for (const details of tbody.querySelectorAll("tr.details")) details.remove();
    const sorted = rows().sort((a, b) => {
      const x = a.cells[col].textContent, y = b.cells[col].textContent;
      return numeric ? parseFloat(x) - parseFloat(y) : x.localeCompare(y);
    });
    for (const row of sorted) tbody.append(row);
  });
  // New order: validate, then add the row at the top.
  const form = document.getElementById("new-order");
  const error = document.getElementById("order-error");
  form.elements.email.addEventListener("input", () => {
    const valid = /^[^@\\s]+@[^@\\s]+$/.test(form.elements.email.value);
    error.textContent = valid ? "" : "Email looks wrong";
  });
  form.addEventListener("submit", (event) => {
    event.preventDefault();
    const amount = parseFloat(form.elements.amount.value);
    if (!form.elements.customer.value || !(amount > 0)) {
      error.textContent = "Customer and amount are required";
      return;
    }
    const first = rows()[0];
    const row = first.cloneNode(true);
    row.dataset.id = String(Number(tbody.dataset.next));
    tbody.dataset.next = String(Number(tbody.dataset.next) + 1);
    row.cells[2].textContent = form.elements.customer.value;
    row.cells[4].textContent = amount.toFixed(2);
    tbody.prepend(row);
    form.reset();
    updateSummary();
  });
  updateSummary();
})();
</script>"""


def _row(index: int) -> str:
    order_id = FIRST_ORDER + index
    customer = CUSTOMERS[index % len(CUSTOMERS)]
    status = STATUSES[(index * 7) % len(STATUSES)]
    day = 1 + (index * 11) % 28
    month = 1 + (index * 5) % 12
    amount = 20 + (index * 37) % 980 + (index % 100) / 100
    return (
        f"<tr data-id='{order_id}' data-status='{status}'>"
        f"<td><input type='checkbox' aria-label='Select order {order_id}'></td>"
        f"<td>{order_id}</td><td>{customer}</td><td>2026-{month:02d}-{day:02d}</td>"
        f"<td>{amount:.2f}</td><td><span class='badge'>{status}</span></td>"
        f"<td><button type='button' data-act='view' aria-label='View order {order_id}'>View"
        f"</button> <button type='button' data-act='flag' aria-pressed='false' "
        f"aria-label='Flag order {order_id}'>Flag</button></td></tr>"
    )


def _frame(rows: str, row_count: int) -> str:
    options = "".join(f"<option>{s}</option>" for s in STATUSES)
    sections = "".join(
        f"<a href='#{name.lower()}'>{name}</a>"
        for name in ("Orders", "Customers", "Products", "Invoices", "Reports", "Settings")
    )
    sort_headers = "".join(
        f"<th><button type='button' data-col='{col}'>{name}</button></th>"
        for col, name in ((1, "Order"), (2, "Customer"), (3, "Date"), (4, "Amount"), (5, "Status"))
    )
    return (
        STYLE
        + "<header class='top'><h1>Orders</h1>"
        f"<nav aria-label='Sections'>{sections}</nav>"
        "<button type='button' id='refresh'>Refresh</button><span id='refreshed'></span></header>"
        "<main>"
        "<form id='filters' role='search' aria-label='Filter orders'>"
        "<label>Search <input name='q' type='search' placeholder='Order, customer'></label>"
        f"<label>Status <select name='status'><option value=''>All</option>{options}</select>"
        "</label><label>From <input name='from' type='date'></label>"
        "<label>To <input name='to' type='date'></label>"
        "<label><input name='flagged' type='checkbox'> Flagged only</label>"
        "<button type='submit'>Apply</button><button type='reset'>Clear</button></form>"
        "<form id='new-order' aria-label='New order'>"
        "<label>Customer <input name='customer' autocomplete='off'></label>"
        "<label>Email <input name='email' type='email'></label>"
        "<label>Amount <input name='amount' type='number' step='0.01' min='0'></label>"
        f"<label>Status <select name='orderStatus'>{options}</select></label>"
        "<label>Note <textarea name='note' rows='1'></textarea></label>"
        "<button type='submit'>Add order</button>"
        "<div id='order-error' class='error' role='alert'></div></form>"
        "<p id='summary' role='status'></p>"
        "<table id='orders'><thead><tr><th>Select</th>"
        f"{sort_headers}<th>Actions</th></tr></thead>"
        f"<tbody data-next='{FIRST_ORDER + row_count}'>{rows}</tbody></table>"
        "</main>" + SCRIPT
    )


def _count_elements(html: str) -> int:
    """Start tags in ``html`` (every element of this generator has one), not counting markup
    inside the script's and the style sheet's text."""
    html = re.sub(r"(<(script|style)[^>]*>).*?(</\2>)", r"\1\3", html, flags=re.S)
    return len(re.findall(r"<[a-zA-Z]", html))


def order_page(target_elements: int) -> tuple[str, int]:
    """The page body with about ``target_elements`` elements in the document, and that count."""
    fixed = _count_elements(_frame("", 0)) + DOCUMENT_ELEMENTS
    row_count = max(1, round((target_elements - fixed) / ROW_ELEMENTS))
    body = _frame("".join(_row(i) for i in range(row_count)), row_count)
    return body, _count_elements(body) + DOCUMENT_ELEMENTS
