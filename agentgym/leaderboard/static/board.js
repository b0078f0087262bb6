"use strict";
// Sortable board tables. Click a column's header: numbers sort by the value in each cell's
// data-sort, text by its letters; a cell with nothing to measure (an empty data-sort) sorts
// last in both directions. Without this script the table reads as served: in rank order.
(function () {
  function key(cell) {
    var raw = cell.getAttribute("data-sort");
    return raw === null ? cell.textContent.trim() : raw;
  }
  function sortBy(table, column, header, numeric) {
    var first = header.getAttribute("data-first") === "descending" ? "descending" : "ascending";
    var now = header.getAttribute("aria-sort");
    var order = now === first ? (first === "ascending" ? "descending" : "ascending") : first;
    var sign = order === "ascending" ? 1 : -1;
    var body = table.tBodies[0];
    var rows = Array.prototype.slice.call(body.rows);
    rows.forEach(function (row, i) { if (!row.hasAttribute("data-order")) row.setAttribute("data-order", String(i)); });
    rows.sort(function (a, b) {
      var x = key(a.cells[column]), y = key(b.cells[column]);
      var tie = Number(a.getAttribute("data-order")) - Number(b.getAttribute("data-order"));
      if (x === "" || y === "") return x === y ? tie : (x === "" ? 1 : -1);
      var c = numeric ? Number(x) - Number(y) : x.localeCompare(y);
      return c !== 0 ? sign * c : tie;
    });
    rows.forEach(function (row) { body.appendChild(row); });
    Array.prototype.forEach.call(table.tHead.rows[0].cells, function (th) { th.setAttribute("aria-sort", "none"); });
    header.setAttribute("aria-sort", order);
  }
  Array.prototype.forEach.call(document.querySelectorAll("table[data-sortable]"), function (table) {
    Array.prototype.forEach.call(table.tHead.rows[0].cells, function (th, column) {
      var button = document.createElement("button");
      button.type = "button";
      button.textContent = th.textContent;
      th.textContent = "";
      th.appendChild(button);
      if (!th.hasAttribute("aria-sort")) th.setAttribute("aria-sort", "none");
      var numeric = th.getAttribute("data-type") === "number";
      button.addEventListener("click", function () { sortBy(table, column, th, numeric); });
    });
  });
})();
