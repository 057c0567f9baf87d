import './styles/app.css';
import { drawHandedNotebook } from './boot';

performance.mark('ipybox:script');

/** Start the application once its chunk is loaded. */
async function start(root: HTMLElement, loading: Promise<typeof import('./ui/app')>): Promise<void> {
  const { App } = await loading;
  const app = new App(root);
  performance.mark('ipybox:shell');
  await app.start();
}

const root = document.getElementById('app');
if (root) {
  const drawn = drawHandedNotebook(root);
  // The application's chunk is fetched while the first frame is drawn.
  const loading = import('./ui/app');
  if (drawn) {
    requestAnimationFrame(() =>
      requestAnimationFrame(() => {
        performance.mark('ipybox:cells-painted');
        void start(root, loading);
      }),
    );
  } else {
    void start(root, loading);
  }
}
