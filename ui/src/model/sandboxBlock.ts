/**
 * How a sandbox block is put in words, the same under a cell and in the Sandbox tab's
 * "Recently blocked": what was stopped, what the field offers, what the button does.
 */
import type { SandboxBlockAccess } from '../ipc';
import { assertNever } from '../util/assert';

export interface BlockWords {
  /** "writing", "reading", "connecting to" — after "The sandbox blocked". */
  verb: string;
  /** The field's label. */
  label: string;
  /** The button. */
  allow: string;
}

export function blockWords(access: SandboxBlockAccess): BlockWords {
  switch (access) {
    case 'write':
      return { verb: 'writing', label: 'Folder to allow writing in', allow: 'Allow writing' };
    case 'read':
      return { verb: 'reading', label: 'Place to make readable', allow: 'Allow reading' };
    case 'connect':
      return { verb: 'connecting to', label: 'Domain to allow', allow: 'Allow' };
    default:
      return assertNever(access, 'block access');
  }
}
