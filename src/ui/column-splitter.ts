import { h } from "./dom.js";

const WIDTH_KEY = "sessiond.treeWidth";
const MIN_PX = 200;
const STEP_PX = 32;

/**
 * The handle between the tree and the pane: dragged (or moved with the
 * arrow keys) it sets the tree column's width, kept for this browser, so a
 * deep tree can get the room its previews need.
 */
export function columnSplitter(body: HTMLElement, column: HTMLElement): HTMLElement {
  const handle = h("div", {
    class: "splitter",
    role: "separator",
    "aria-orientation": "vertical",
    "aria-label": "resize the tree column",
    tabindex: 0,
  });
  const setWidth = (px: number) => {
    const max = Math.max(MIN_PX, body.clientWidth - MIN_PX);
    const width = Math.round(Math.min(max, Math.max(MIN_PX, px)));
    body.style.setProperty("--tree-width", `${width}px`);
    localStorage.setItem(WIDTH_KEY, String(width));
  };
  const kept = Number(localStorage.getItem(WIDTH_KEY));
  if (kept >= MIN_PX) body.style.setProperty("--tree-width", `${kept}px`);
  handle.addEventListener("pointerdown", (down) => {
    down.preventDefault();
    handle.setPointerCapture(down.pointerId);
    const start = column.getBoundingClientRect().width;
    const move = (ev: PointerEvent) => setWidth(start + ev.clientX - down.clientX);
    const up = () => {
      handle.removeEventListener("pointermove", move);
      handle.removeEventListener("pointerup", up);
    };
    handle.addEventListener("pointermove", move);
    handle.addEventListener("pointerup", up);
  });
  handle.addEventListener("keydown", (ev) => {
    const step = { ArrowLeft: -STEP_PX, ArrowRight: STEP_PX }[ev.key];
    if (step === undefined) return;
    ev.preventDefault();
    setWidth(column.getBoundingClientRect().width + step);
  });
  return handle;
}
