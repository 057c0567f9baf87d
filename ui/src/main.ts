import 'katex/dist/katex.min.css';
import './styles/app.css';
import { App } from './ui/app';

const root = document.getElementById('app');
if (root) {
  const app = new App(root);
  void app.start();
}
