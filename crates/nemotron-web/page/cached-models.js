// The models this browser keeps (the package's `ModelCache`: the files `Diarizer.fromUrl` downloaded, in Cache
// Storage), one line per folder with its files' size and when they were stored, and a button that clears them all.

const $ = (id) => document.getElementById(id);

// The stored files by folder (a file's URL up to its last `/`): [{ folder, files, size, stored }], `stored` the
// latest.
function byFolder(entries) {
  const folders = new Map();
  for (const { url, size, stored } of entries) {
    const folder = url.slice(0, url.lastIndexOf("/") + 1);
    const model = folders.get(folder) ?? { folder, files: 0, size: 0, stored };
    model.files += 1;
    model.size += size;
    if (stored > model.stored) model.stored = stored;
    folders.set(folder, model);
  }
  return [...folders.values()];
}

export class CachedModels {
  // `ModelCache`: the package's class; `fail(error)`: what the page does with an error.
  constructor(ModelCache, fail) {
    this.cache = ModelCache;
    this.fail = fail;
    $("cache-clear").addEventListener("click", () => this.clear());
  }

  async show() {
    try {
      const models = byFolder(await this.cache.list());
      const line = ({ folder, files, size, stored }) => {
        const item = document.createElement("li");
        const count = files === 1 ? "1 file" : `${files} files`;
        item.textContent = `${folder}: ${count}, ${(size / 1e6).toFixed(2)} MB, stored ${stored.toLocaleString()}`;
        return item;
      };
      $("cached-models").replaceChildren(...models.map(line));
      $("cache-none").hidden = models.length > 0;
      $("cache-clear").disabled = models.length === 0;
    } catch (error) {
      this.fail(error);
    }
  }

  async clear() {
    $("cache-clear").disabled = true;
    try {
      await this.cache.clear();
    } catch (error) {
      this.fail(error);
    }
    await this.show();
  }
}
