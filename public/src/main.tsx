import "@xterm/xterm/css/xterm.css";
import { render } from "preact";
import { start } from "./store.ts";
import { App } from "./views/App.tsx";

render(<App />, document.getElementById("app") as HTMLElement);
start();
