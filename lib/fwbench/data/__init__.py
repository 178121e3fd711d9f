"""Dataset loaders (framework-free): IMDB reviews and the Monash forecasting archive."""
