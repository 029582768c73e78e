import { h } from "./dom.js";

/**
 * A list of fixed-height rows of which only the visible ones (plus a margin)
 * are in the DOM: a 100,000-entry session is a few dozen elements and one
 * tall spacer. Written by hand: with fixed row heights windowing is twenty
 * lines, less than adapting a library's observer and measuring model.
 *
 * A row whose key (`keyOf`: everything its drawing depends on) is the same
 * as at the last draw keeps its element: while a big tree loads, the list
 * is drawn again for every page that arrives, and rows made anew each time
 * would be replaced under the pointer between a press and its release,
 * and cost the page's main thread their DOM work for nothing.
 */
export class VirtualList {
  /** The scrolling element to put on the page. */
  readonly element: HTMLElement;
  private readonly spacer: HTMLElement;
  private count = 0;
  private frame = 0;
  /** The elements drawn last, by key. */
  private drawn = new Map<string, HTMLElement>();

  constructor(
    private readonly rowHeight: number,
    private readonly renderRow: (index: number) => HTMLElement,
    label: string,
    /** The key of row `index`: rows with equal keys draw alike. */
    private readonly keyOf: (index: number) => string,
  ) {
    this.spacer = h("div", { class: "vl-spacer" });
    this.element = h("div", { class: "vl", role: "list", "aria-label": label }, this.spacer);
    this.element.addEventListener("scroll", () => this.schedule());
  }

  /** The number of rows changed (or their content): draw again. */
  setCount(count: number): void {
    this.count = count;
    this.spacer.style.height = `${count * this.rowHeight}px`;
    this.schedule();
  }

  /** Scrolls so that row `index` is visible (centred when it was not). */
  scrollTo(index: number): void {
    const top = index * this.rowHeight;
    const view = this.element.clientHeight;
    const at = this.element.scrollTop;
    if (top < at || top + this.rowHeight > at + view) {
      this.element.scrollTop = Math.max(0, top - view / 2);
    }
    this.draw();
  }

  /** Scrolls to the last row. */
  scrollToEnd(): void {
    this.element.scrollTop = this.element.scrollHeight;
    this.draw();
  }

  /** True when the last row is in view (follow mode keeps it so). */
  atEnd(): boolean {
    const el = this.element;
    return el.scrollTop + el.clientHeight >= el.scrollHeight - this.rowHeight * 2;
  }

  private schedule(): void {
    if (this.frame !== 0) return;
    this.frame = requestAnimationFrame(() => {
      this.frame = 0;
      this.draw();
    });
  }

  /** Draws the rows in view and a screen's worth either side. */
  draw(): void {
    const view = this.element.clientHeight || 600;
    const first = Math.max(0, Math.floor(this.element.scrollTop / this.rowHeight) - 20);
    const last = Math.min(this.count, first + Math.ceil(view / this.rowHeight) + 40);
    const rows: HTMLElement[] = [];
    const drawn = new Map<string, HTMLElement>();
    let same = last - first === this.spacer.childElementCount;
    for (let i = first; i < last; i++) {
      const key = this.keyOf(i);
      // A key seen twice in one draw (not expected of distinct rows) gets an element of its own.
      let row = this.drawn.get(key);
      if (row === undefined || drawn.has(key)) {
        row = this.renderRow(i);
        row.style.height = `${this.rowHeight}px`;
      }
      const top = `${i * this.rowHeight}px`;
      if (row.style.top !== top) row.style.top = top;
      if (same && this.spacer.children[i - first] !== row) same = false;
      drawn.set(key, row);
      rows.push(row);
    }
    this.drawn = drawn;
    if (!same) this.spacer.replaceChildren(...rows);
  }
}
