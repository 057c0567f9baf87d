// @vitest-environment jsdom
import { readFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { MIME_PRIORITY } from '../../src/render/outputs';
import { DATA_MEDIA_TYPES, sanitizeHtmlToString } from '../../src/render/sanitize';

// The same file the export (src-tauri/src/export/html.rs, sanitize.rs) is tested with: an
// exported page picks an output's entry as the app does and shows no data: media the app refuses.
const SHARED = resolve(dirname(fileURLToPath(import.meta.url)), '../../../tests/fixtures/render-lists/lists.json');
const shared = JSON.parse(readFileSync(SHARED, 'utf8')) as { mime_order: string[]; data_media: { app: string[]; export: string[] } };

describe('the render lists the app and the export share', () => {
  it('chooses among MIME types in the shared order', () => {
    expect([...MIME_PRIORITY]).toEqual(shared.mime_order);
  });

  it('lets data: URIs hold the shared media types', () => {
    expect([...DATA_MEDIA_TYPES]).toEqual(shared.data_media.app);
  });

  it('keeps a data: source of each listed type and refuses others', () => {
    for (const type of shared.data_media.app) {
      const mime = type.replace('/*', '/ogg');
      const tag = mime.startsWith('image/') ? 'img' : mime.split('/')[0];
      const out = sanitizeHtmlToString(`<${tag} src="data:${mime};base64,AAAA"></${tag}>`);
      expect(out, mime).toContain(`src="data:${mime};base64,AAAA"`);
    }
    for (const refused of ['data:image/pngx;base64,AAAA', 'data:text/html;base64,AAAA', 'data:image/png', 'data:imageXpng;base64,AAAA']) {
      expect(sanitizeHtmlToString(`<img src="${refused}">`), refused).not.toContain('src=');
    }
  });
});
