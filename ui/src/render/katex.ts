/**
 * KaTeX and its stylesheet, a chunk of their own: loaded the first time something shows math
 * (see `math.ts`), so a notebook without math never holds them.
 */
import 'katex/dist/katex.min.css';

export { default } from 'katex';
