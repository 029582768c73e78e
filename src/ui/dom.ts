import { showBidiControls } from "./bidi-controls.js";

/**
 * Building DOM nodes without HTML strings: every text goes in as a text node,
 * so message content can never become markup by accident. The one place
 * that sets innerHTML is markdown.ts, with DOMPurify's output.
 */

type Child = Node | string | number | null | undefined | false;
type Attrs = Record<string, string | number | boolean | undefined | ((e: Event) => void)>;

/** An element with attributes (`on*` keys are listeners, `class` the class name) and children. */
export function h<K extends keyof HTMLElementTagNameMap>(
  tag: K,
  attrs: Attrs | null = null,
  ...children: Child[]
): HTMLElementTagNameMap[K] {
  const el = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs ?? {})) {
    if (value === undefined || value === false) continue;
    if (typeof value === "function") el.addEventListener(key.slice(2), value);
    else if (key === "class") el.className = String(value);
    else el.setAttribute(key, value === true ? "" : String(value));
  }
  append(el, ...children);
  return el;
}

/** Appends children, strings as text nodes. */
export function append(parent: Node, ...children: Child[]): void {
  for (const c of children) {
    if (c === null || c === undefined || c === false) continue;
    parent.appendChild(typeof c === "string" || typeof c === "number" ? text(c) : c);
  }
}

/**
 * A text node: the only way a string from the server reaches the page
 * outside markdown. Bidi run controls in it are shown, not obeyed, so a title
 * cannot reorder the text around it.
 */
export function text(value: string | number): Text {
  return document.createTextNode(showBidiControls(String(value)));
}

/** Empties `el` and puts `children` in. */
export function replace(el: Element, ...children: Child[]): void {
  el.replaceChildren();
  append(el, ...children);
}

/** A timestamp as local date and time, with the exact UTC instant as its tooltip. */
export function time(date: Date | undefined): HTMLElement {
  if (date === undefined) return h("span", { class: "muted" }, "—");
  return h(
    "time",
    { datetime: date.toISOString(), title: date.toISOString() },
    date.toLocaleString(),
  );
}
