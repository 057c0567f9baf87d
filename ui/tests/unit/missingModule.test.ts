import { describe, expect, it } from 'vitest';
import { packageForMissingModule } from '../../src/model/missingModule';

describe('the install offer under ModuleNotFoundError', () => {
  it('names the package that provides the module', () => {
    expect(packageForMissingModule('ModuleNotFoundError', "No module named 'pandas'")).toBe('pandas');
    expect(packageForMissingModule('ModuleNotFoundError', "No module named 'sklearn.linear_model'")).toBe('scikit-learn');
    expect(packageForMissingModule('ModuleNotFoundError', "No module named 'cv2'")).toBe('opencv-python');
    expect(packageForMissingModule('ModuleNotFoundError', "No module named 'typing_extensions'")).toBe('typing-extensions');
  });

  it('offers nothing for other errors or for names pip would read as more than a name', () => {
    expect(packageForMissingModule('ImportError', "No module named 'pandas'")).toBeNull();
    for (const bad of ["No module named '--index-url=http://evil'", "No module named 'a b'", "No module named '../x'", "No module named 'x\u202e'", 'something else', "No module named 'git+https://x'"]) {
      expect(packageForMissingModule('ModuleNotFoundError', bad)).toBeNull();
    }
  });
});
