/**
 * What each view of the console gets from console.ts.
 */
import type { Schemas } from './api';

/** The caller (`getCaller`), where to draw, and the console's hooks. */
export interface ViewContext {
  caller: Schemas['Caller'];
  root: HTMLElement;
  /** Registers a clean-up run when the view is left (a live view's stream). */
  onLeave(fn: () => void): void;
  /** Back to the sign-in form with `message` (a refused key). */
  signOut(message?: string): void;
}
