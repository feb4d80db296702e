// Types of launch.js for the TypeScript that imports it (the bundle's builder, the test setup).
export declare const ROOT: string;
export declare const BUNDLE_FOLDER: string;
export declare const BUNDLE_WATCHED: readonly string[];
export declare function freshBuild(): string | null;
export declare function inUse(folder: string): boolean;
export declare function entryUrl(name: 'cli' | 'web' | 'embed', source: string): Promise<string>;
export declare function useCompileCache(): void;
