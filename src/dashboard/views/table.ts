import { type Html, html, type Renderable } from '../../web/html.ts'
import { type IconName, icon } from '../../web/icons.ts'

/**
 * Every table of the dashboard, written once: its box, a caption for screen readers, one header
 * per column, and each cell labelled with its column (`data-label`), so that on a narrow screen
 * the stylesheet stacks each row into "label value" lines and no column is out of sight. The
 * explicit roles keep the table a table for assistive technology when its display changes.
 */

export interface Column<Row> {
  /** The column's header, and each cell's label when rows stack on a narrow screen. */
  label: string
  /** Read by screen readers only (a column of buttons): no label is shown. */
  hiddenLabel?: boolean
  /** Numbers, aligned right. */
  numeric?: boolean
  cell: (row: Row) => Renderable
}

export interface DataTable<Row> {
  /** Says what the table lists (read by screen readers, not shown). */
  caption: string
  columns: readonly Column<Row>[]
  rows: readonly Row[]
  /** What the box shows when there are no rows. */
  empty: { icon: IconName; text: Renderable }
  testId?: string
  /** Attributes of a row's <tr> (a class, a data- attribute). */
  rowAttributes?: (row: Row) => Html
}

export function dataTable<Row>(table: DataTable<Row>): Html {
  if (table.rows.length === 0) {
    return html`<div class="table-wrap"><div class="empty">${icon(table.empty.icon)}<p>${table.empty.text}</p></div></div>`
  }
  const num = (column: Column<Row>) => (column.numeric === true ? html` class="num"` : '')
  return html`<div class="table-wrap"><table role="table"${table.testId === undefined ? '' : html` data-testid="${table.testId}"`}>
  <caption class="visually-hidden">${table.caption}</caption>
  <thead role="rowgroup"><tr role="row">${table.columns.map(
    (c) =>
      html`<th role="columnheader" scope="col"${num(c)}>${c.hiddenLabel === true ? html`<span class="visually-hidden">${c.label}</span>` : c.label}</th>`,
  )}</tr></thead>
  <tbody role="rowgroup">${table.rows.map(
    (row) =>
      html`<tr role="row"${table.rowAttributes?.(row) ?? ''}>${table.columns.map(
        (c) =>
          html`<td role="cell" data-label="${c.hiddenLabel === true ? '' : c.label}"${num(c)}>${c.cell(row)}</td>`,
      )}</tr>`,
  )}</tbody>
</table></div>`
}
