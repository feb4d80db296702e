// First: zod is configured before any module that builds a schema runs.
import './lib/zod-jitless.ts';
import { mount } from 'svelte';
import App from './App.svelte';
import './styles.css';

mount(App, { target: document.getElementById('app')! });
